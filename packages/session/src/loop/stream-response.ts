import type { ContentBlock, ModelProvider, ModelRequest, ModelResponse } from "@unforget/core";
import { ModelResponseAccumulator } from "@unforget/provider-runtime";
import type { SessionEvent } from "./session-events.ts";

/** One streamed model call: the whole response, or what had arrived when the signal aborted it. */
export type StreamOutcome =
  | { kind: "complete"; response: ModelResponse }
  | { kind: "aborted"; response: ModelResponse | undefined };

/**
 * Streams one request, passing text and thinking deltas on as they arrive. On an abort it resolves with the
 * partial response (the blocks that arrived, tool inputs as far as they were written); any other failure
 * rejects with the provider's typed error.
 */
export async function streamResponse(
  provider: ModelProvider,
  request: ModelRequest,
  options: { signal: AbortSignal; turn: number; emit: (event: SessionEvent) => void },
): Promise<StreamOutcome> {
  const accumulator = new ModelResponseAccumulator();
  try {
    const stream = provider.streamMessage(request, { signal: options.signal });
    for await (const event of stream) {
      accumulator.push(event);
      if (event.type === "text_delta") {
        options.emit({ type: "text-delta", turn: options.turn, index: event.index, text: event.text });
      } else if (event.type === "thinking_delta") {
        options.emit({
          type: "thinking-delta",
          turn: options.turn,
          index: event.index,
          thinking: event.thinking,
        });
      }
    }
  } catch (error) {
    if (!options.signal.aborted) throw error;
    return {
      kind: "aborted",
      response: accumulator.hasStarted ? sendable(accumulator.finish(), true) : undefined,
    };
  }
  if (options.signal.aborted) return { kind: "aborted", response: sendable(accumulator.finish(), true) };
  return { kind: "complete", response: sendable(accumulator.finish(), false) };
}

/**
 * Keeps only blocks a provider accepts back in history: no empty text, no tool use without an id or a name,
 * and in a cut-off stream no thinking that never got its signature.
 */
function sendable(response: ModelResponse, partial: boolean): ModelResponse {
  const content = response.content.filter((block: ContentBlock) => {
    if (block.type === "text") return block.text !== "";
    if (block.type === "thinking")
      return !partial || (block.signature !== undefined && block.signature !== "");
    if (block.type === "tool_use") return block.id !== "" && block.name !== "";
    return true;
  });
  return content.length === response.content.length ? response : { ...response, content };
}
