import type {
  ContentBlock as BedrockContentBlock,
  ConverseResponse,
  ConverseStreamOutput,
  TokenUsage,
} from "@aws-sdk/client-bedrock-runtime";
import {
  type ContentBlock,
  createUsage,
  type ModelResponse,
  type ModelStreamEvent,
  type StopReason,
  type Usage,
} from "@unforget/core";

interface OpenBlock {
  /** Position in the final `content` array. */
  index: number;
  kind: ContentBlock["type"];
  /** Redacted reasoning arrives as bytes; it is buffered and announced whole when its block stops. */
  redacted?: Buffer[];
  announced: boolean;
}

/**
 * Translates ConverseStream events into the normalised stream events. Converse numbers blocks itself and
 * only announces tool-use blocks with a start event; text and reasoning blocks begin with their first delta,
 * so a `block_start` is synthesised then. Usage arrives last, in the `metadata` event. `message_stop` is
 * yielded only when the wire sent `messageStop`.
 */
export async function* translateConverseStream(
  events: AsyncIterable<ConverseStreamOutput>,
  id: string,
  model: string,
): AsyncGenerator<ModelStreamEvent> {
  const blocks = new Map<number, OpenBlock>();
  let nextIndex = 0;
  let started = false;
  let stopped = false;

  const start = function* (): Generator<ModelStreamEvent> {
    if (started) return;
    started = true;
    yield { type: "message_start", id, model, usage: createUsage() };
  };
  const open = (wireIndex: number, kind: ContentBlock["type"]): OpenBlock => {
    const existing = blocks.get(wireIndex);
    if (existing) return existing;
    const block: OpenBlock = { index: nextIndex, kind, announced: false };
    nextIndex += 1;
    blocks.set(wireIndex, block);
    return block;
  };
  const announce = function* (block: OpenBlock, initial: ContentBlock): Generator<ModelStreamEvent> {
    if (block.announced) return;
    block.announced = true;
    yield { type: "block_start", index: block.index, block: initial };
  };

  for await (const event of events) {
    if (event.messageStart !== undefined) {
      yield* start();
    } else if (event.contentBlockStart !== undefined) {
      yield* start();
      const wireIndex = event.contentBlockStart.contentBlockIndex ?? 0;
      const startMember = event.contentBlockStart.start;
      if (startMember?.toolUse !== undefined) {
        const block = open(wireIndex, "tool_use");
        yield* announce(block, {
          type: "tool_use",
          id: startMember.toolUse.toolUseId ?? "",
          name: startMember.toolUse.name ?? "",
          input: {},
        });
      } else if (startMember !== undefined) {
        const block = open(wireIndex, "unknown");
        yield* announce(block, unknownBlock(startMember));
      }
    } else if (event.contentBlockDelta !== undefined) {
      yield* start();
      const wireIndex = event.contentBlockDelta.contentBlockIndex ?? 0;
      const delta = event.contentBlockDelta.delta;
      if (delta === undefined) continue;
      if (typeof delta.text === "string") {
        const block = open(wireIndex, "text");
        yield* announce(block, { type: "text", text: "" });
        if (delta.text.length > 0) yield { type: "text_delta", index: block.index, text: delta.text };
      } else if (delta.toolUse !== undefined) {
        const block = open(wireIndex, "tool_use");
        yield* announce(block, { type: "tool_use", id: "", name: "", input: {} });
        yield { type: "tool_input_delta", index: block.index, partialJson: delta.toolUse.input ?? "" };
      } else if (delta.reasoningContent !== undefined) {
        const reasoning = delta.reasoningContent;
        if (reasoning.redactedContent !== undefined) {
          const block = open(wireIndex, "redacted_thinking");
          block.redacted = [...(block.redacted ?? []), Buffer.from(reasoning.redactedContent)];
          continue;
        }
        const block = open(wireIndex, "thinking");
        yield* announce(block, { type: "thinking", thinking: "" });
        if (typeof reasoning.text === "string" && reasoning.text.length > 0) {
          yield { type: "thinking_delta", index: block.index, thinking: reasoning.text };
        }
        if (typeof reasoning.signature === "string") {
          yield { type: "signature_delta", index: block.index, signature: reasoning.signature };
        }
      } else {
        // Citations, tool-result and image deltas have no core counterpart; keep them as unknown blocks.
        const block = open(wireIndex, "unknown");
        yield* announce(block, unknownBlock(delta));
      }
    } else if (event.contentBlockStop !== undefined) {
      const wireIndex = event.contentBlockStop.contentBlockIndex ?? 0;
      const block = blocks.get(wireIndex);
      if (block === undefined) continue;
      if (block.redacted !== undefined) {
        yield* announce(block, {
          type: "redacted_thinking",
          data: Buffer.concat(block.redacted).toString("base64"),
        });
      }
      if (block.announced) yield { type: "block_stop", index: block.index };
    } else if (event.messageStop !== undefined) {
      yield* start();
      stopped = true;
      const raw = event.messageStop.stopReason;
      const stopSequence = stopSequenceOf(event.messageStop.additionalModelResponseFields);
      yield {
        type: "message_delta",
        stopReason: normalizeBedrockStopReason(raw),
        ...(raw === undefined ? {} : { rawStopReason: raw }),
        ...(stopSequence === undefined ? {} : { stopSequence }),
      };
    } else if (event.metadata !== undefined) {
      yield* start();
      yield { type: "message_delta", usage: normalizeBedrockUsage(event.metadata.usage) };
    }
    // Exception members never reach here: the SDK throws them from the iterator.
  }
  // Usage follows `messageStop` in a `metadata` event, so the end is told once the wire is done; a stream
  // without `messageStop` was cut short, and the runtime reports it.
  if (stopped) yield { type: "message_stop" };
}

/** Maps a Converse stop reason onto the normalised set; the raw word is kept on the response. */
export function normalizeBedrockStopReason(raw: string | undefined): StopReason {
  switch (raw) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "model_context_window_exceeded":
      return raw;
    case "guardrail_intervened":
    case "content_filtered":
      return "refusal";
    default:
      return "other";
  }
}

/**
 * Converse usage → core usage. Bedrock's `inputTokens` excludes the cached part (as on the Anthropic API),
 * `cacheWriteInputTokens` is the cache creation.
 */
export function normalizeBedrockUsage(usage: Partial<TokenUsage> | undefined): Usage {
  return {
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cacheCreationInputTokens: usage?.cacheWriteInputTokens ?? 0,
    cacheReadInputTokens: usage?.cacheReadInputTokens ?? 0,
  };
}

/** Translates one Converse output block; blocks without a core form become `UnknownBlock`s. */
export function fromConverseBlock(block: BedrockContentBlock): ContentBlock | undefined {
  if (typeof block.text === "string") return { type: "text", text: block.text };
  if (block.toolUse !== undefined) {
    return {
      type: "tool_use",
      id: block.toolUse.toolUseId ?? "",
      name: block.toolUse.name ?? "",
      input: block.toolUse.input ?? {},
    };
  }
  if (block.reasoningContent !== undefined) {
    const reasoning = block.reasoningContent;
    if (reasoning.reasoningText !== undefined) {
      const thinking: ContentBlock = { type: "thinking", thinking: reasoning.reasoningText.text ?? "" };
      if (reasoning.reasoningText.signature !== undefined)
        thinking.signature = reasoning.reasoningText.signature;
      return thinking;
    }
    if (reasoning.redactedContent !== undefined) {
      return { type: "redacted_thinking", data: Buffer.from(reasoning.redactedContent).toString("base64") };
    }
  }
  if (block.cachePoint !== undefined) return undefined;
  return unknownBlock(block);
}

/**
 * Keeps a Converse block the core model does not know as `{ type: member, [member]: value }`, which the
 * request translation recognises and sends back unchanged. The SDK reports members it does not know itself
 * as `$unknown: [member, value]`.
 */
export function unknownBlock(block: unknown): ContentBlock {
  if (isObject(block)) {
    const unknown = block.$unknown;
    if (Array.isArray(unknown) && typeof unknown[0] === "string") {
      return { type: "unknown", original: { type: unknown[0], [unknown[0]]: unknown[1] } };
    }
    const member = Object.keys(block).find((key) => block[key] !== undefined);
    if (member !== undefined) return { type: "unknown", original: { type: member, [member]: block[member] } };
  }
  return { type: "unknown", original: { type: "invalid", value: block } };
}

/** Builds the core response from a Converse response. */
export function fromConverseResponse(
  output: Pick<ConverseResponse, "output" | "stopReason" | "usage" | "additionalModelResponseFields">,
  id: string,
  model: string,
): ModelResponse {
  const content: ContentBlock[] = [];
  for (const block of output.output?.message?.content ?? []) {
    const converted = fromConverseBlock(block);
    if (converted !== undefined) content.push(converted);
  }
  const response: ModelResponse = {
    id,
    model,
    role: "assistant",
    content,
    stopReason: normalizeBedrockStopReason(output.stopReason),
    usage: normalizeBedrockUsage(output.usage),
  };
  if (output.stopReason !== undefined) response.rawStopReason = output.stopReason;
  const stopSequence = stopSequenceOf(output.additionalModelResponseFields);
  if (stopSequence !== undefined) response.stopSequence = stopSequence;
  return response;
}

/** Claude reports the matched stop sequence in the model-native response fields. */
export function stopSequenceOf(fields: unknown): string | undefined {
  if (isObject(fields) && typeof fields.stop_sequence === "string") return fields.stop_sequence;
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
