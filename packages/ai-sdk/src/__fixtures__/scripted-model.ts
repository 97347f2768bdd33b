import { estimateMessageTokens } from "@unforget/tokens";
import type { ModelMessage } from "ai";
import { fromModelMessages } from "../convert-model-messages.ts";

/** What the scripted model answers: text, or one tool call. */
export type ScriptedReply = { text: string } | { tool: string; input: Record<string, unknown> };

/** One call the model received. */
export interface ScriptedCall {
  prompt: ModelMessage[];
  /** Its size by Unforget's estimate (the usage the model reports for it). */
  tokens: number;
  /** The output limit it asked for. */
  maxOutputTokens?: number;
}

/** The mock model classes of the AI SDK 6 (`MockLanguageModelV3`) and 7 (`MockLanguageModelV4`), by shape. */
type MockClass = new (settings: {
  modelId?: string;
  doGenerate: (options: { prompt: unknown; maxOutputTokens?: number }) => Promise<unknown>;
  doStream: (options: { prompt: unknown; maxOutputTokens?: number }) => Promise<unknown>;
}) => unknown;

/** The size of a call's prompt, by Unforget's estimate. */
export function promptTokens(prompt: readonly ModelMessage[]): number {
  return fromModelMessages(prompt).reduce((sum, message) => sum + estimateMessageTokens(message), 0);
}

/**
 * The AI SDK's own mock language model (`ai/test`), answering from a script and reporting as usage the size of
 * the prompt it received, as a provider would. Both `doGenerate` (generateText) and `doStream` (streamText).
 */
export function createScriptedModel(
  Mock: MockClass,
  reply: (prompt: ModelMessage[], call: number) => ScriptedReply,
): { model: unknown; calls: ScriptedCall[] } {
  const calls: ScriptedCall[] = [];
  let ids = 0;
  const answer = (options: { prompt: unknown; maxOutputTokens?: number }) => {
    const prompt = options.prompt as ModelMessage[];
    const tokens = promptTokens(prompt);
    calls.push({
      prompt,
      tokens,
      ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
    });
    const next = reply(prompt, calls.length);
    const usage = {
      inputTokens: { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 40, text: 40, reasoning: 0 },
    };
    const id = `call_${++ids}`;
    return { next, usage, id };
  };
  const model = new Mock({
    modelId: "claude-sonnet-4-5",
    async doGenerate(options) {
      const { next, usage, id } = answer(options);
      const content =
        "text" in next
          ? [{ type: "text", text: next.text }]
          : [{ type: "tool-call", toolCallId: id, toolName: next.tool, input: JSON.stringify(next.input) }];
      const finishReason =
        "text" in next ? { unified: "stop", raw: "end_turn" } : { unified: "tool-calls", raw: "tool_use" };
      return {
        content,
        finishReason,
        usage,
        warnings: [],
        response: { id: `resp_${id}`, modelId: "claude-sonnet-4-5" },
      };
    },
    async doStream(options) {
      const { next, usage, id } = answer(options);
      const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
      parts.push({ type: "response-metadata", id: `resp_${id}`, modelId: "claude-sonnet-4-5" });
      if ("text" in next) {
        parts.push(
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: next.text },
          { type: "text-end", id: "t" },
        );
      } else {
        parts.push({
          type: "tool-call",
          toolCallId: id,
          toolName: next.tool,
          input: JSON.stringify(next.input),
        });
      }
      parts.push({
        type: "finish",
        finishReason:
          "text" in next ? { unified: "stop", raw: "end_turn" } : { unified: "tool-calls", raw: "tool_use" },
        usage,
      });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
  return { model, calls };
}

/** True when the prompt is a compaction request (its last message asks for the nine-section summary). */
export function isSummaryRequest(prompt: readonly ModelMessage[]): boolean {
  return JSON.stringify(prompt.slice(-1)).includes("<summary> tags");
}

/** A model's summary of the prompt: the nine sections, quoting every numbered request the prompt holds. */
export function summaryReply(prompt: readonly ModelMessage[]): string {
  const requests = [...new Set(JSON.stringify(prompt).match(/Request \d+: [^"\\]*/g) ?? [])];
  const sections = [
    "1. Primary Request and Intent:\nRead the files.",
    "2. Key Technical Concepts:\nParse calls.",
    "3. Files and Code Sections:\nsrc/",
    "4. Errors and Fixes:\nNone.",
    "5. Problem Solving:\nReading.",
    `6. All User Messages:\n${requests.map((request) => `- ${request}`).join("\n")}`,
    "7. Pending Tasks:\nMore files.",
    "8. Current Work:\nReading.",
    "9. Optional Next Step:\nRead on.",
  ];
  return `<analysis>scratch</analysis>\n<summary>\n${sections.join("\n")}\n</summary>`;
}
