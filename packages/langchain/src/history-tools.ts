import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { type ContextManager, type ContextManagerOptions, createContextStatusTool } from "@unforget/compact";
import { type Tool, toolOutputText } from "@unforget/core";
import { createHostHistory } from "@unforget/history";

/**
 * The history tools as LangChain tools (`context_status`, `history_search`, `history_read`), and the transcript
 * the manager must write for them: the caller's `transcript`, else `<sessionDir>/transcript.jsonl`.
 */
export function langChainHistory(
  options: Pick<ContextManagerOptions, "transcript" | "sessionDir" | "sessionId">,
  manager: () => Pick<ContextManager, "status" | "entries" | "pins">,
): { tools: StructuredToolInterface[]; transcript: NonNullable<ContextManagerOptions["transcript"]> } {
  const history = createHostHistory(options);
  const status = createContextStatusTool({
    status: () => manager().status(),
    pins: () => manager().pins(),
    get entries() {
      return manager().entries;
    },
  });
  const sessionId = options.sessionId ?? "langchain";
  return {
    tools: [status, ...history.tools].map((core) => toLangChainTool(core, sessionId)),
    transcript: history.transcript,
  };
}

/** A core tool as a LangChain tool (JSON schema input), marked with what compaction may do with its results. */
function toLangChainTool(core: Tool, sessionId: string): StructuredToolInterface {
  return tool(
    async (input: Record<string, unknown>, config) =>
      toolOutputText(
        await core.execute(input, {
          signal: config?.signal ?? new AbortController().signal,
          sessionId,
          toolUseId: typeof config?.toolCall?.id === "string" ? config.toolCall.id : "",
          cwd: process.cwd(),
          sessionState: new Map(),
        }),
      ),
    {
      name: core.name,
      description: core.description,
      schema: core.inputSchema as Record<string, unknown>,
      ...(core.resultRetention ? { metadata: { resultRetention: core.resultRetention } } : {}),
    },
  ) as unknown as StructuredToolInterface;
}
