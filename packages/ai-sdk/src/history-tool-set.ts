import { type ContextManager, type ContextManagerOptions, createContextStatusTool } from "@unforget/compact";
import { type Tool, toolOutputText } from "@unforget/core";
import { createHostHistory } from "@unforget/history";
import { jsonSchema, type ToolSet, tool } from "ai";

/**
 * The history tools as an AI SDK tool set (`context_status`, `history_search`, `history_read`), and the transcript
 * the manager must write for them: the caller's `transcript`, else `<sessionDir>/transcript.jsonl`.
 */
export function aiSdkHistory(
  options: Pick<ContextManagerOptions, "transcript" | "sessionDir" | "sessionId">,
  manager: () => Pick<ContextManager, "status" | "entries" | "pins">,
): { tools: ToolSet; transcript: NonNullable<ContextManagerOptions["transcript"]> } {
  const history = createHostHistory(options);
  const status = createContextStatusTool({
    status: () => manager().status(),
    pins: () => manager().pins(),
    get entries() {
      return manager().entries;
    },
  });
  return {
    tools: toAiSdkTools([status, ...history.tools], options.sessionId ?? "aisdk"),
    transcript: history.transcript,
  };
}

/** Core tools as an AI SDK tool set, each marked with what compaction may do with its results. */
function toAiSdkTools(tools: readonly Tool[], sessionId: string): ToolSet {
  const set: ToolSet = {};
  for (const core of tools) {
    set[core.name] = tool({
      description: core.description,
      inputSchema: jsonSchema<Record<string, unknown>>(core.inputSchema as Parameters<typeof jsonSchema>[0]),
      ...(core.resultRetention ? { metadata: { resultRetention: core.resultRetention } } : {}),
      execute: async (input, { toolCallId, abortSignal }) =>
        toolOutputText(
          await core.execute(input, {
            signal: abortSignal ?? new AbortController().signal,
            sessionId,
            toolUseId: toolCallId,
            cwd: process.cwd(),
            sessionState: new Map(),
          }),
        ),
    });
  }
  return set;
}
