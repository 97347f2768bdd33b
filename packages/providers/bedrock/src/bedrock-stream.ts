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

type ContentBlockStart = NonNullable<ConverseStreamOutput["contentBlockStart"]>;
type ContentBlockDelta = NonNullable<ConverseStreamOutput["contentBlockDelta"]>;
type MessageStop = NonNullable<ConverseStreamOutput["messageStop"]>;

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
  const translator = new ConverseStreamTranslator(id, model);
  for await (const event of events) yield* translator.push(event);
  yield* translator.finish();
}

/** The state of one ConverseStream: which wire blocks map to which positions, and whether it ended. */
class ConverseStreamTranslator {
  private readonly blocks = new Map<number, OpenBlock>();
  private nextIndex = 0;
  private started = false;
  private stopped = false;
  private readonly id: string;
  private readonly model: string;

  constructor(id: string, model: string) {
    this.id = id;
    this.model = model;
  }

  /** Our events for one wire event. Exception members never come here: the SDK throws them. */
  *push(event: ConverseStreamOutput): Generator<ModelStreamEvent> {
    if (event.contentBlockStop !== undefined) {
      yield* this.blockStop(event.contentBlockStop.contentBlockIndex ?? 0);
      return;
    }
    const known = [event.messageStart, event.contentBlockStart, event.contentBlockDelta, event.messageStop];
    if (known.every((member) => member === undefined) && event.metadata === undefined) return;
    yield* this.start();
    if (event.contentBlockStart !== undefined) yield* this.blockStart(event.contentBlockStart);
    else if (event.contentBlockDelta !== undefined) yield* this.blockDelta(event.contentBlockDelta);
    else if (event.messageStop !== undefined) yield* this.messageStop(event.messageStop);
    else if (event.metadata !== undefined) {
      yield { type: "message_delta", usage: normalizeBedrockUsage(event.metadata.usage) };
    }
  }

  /**
   * Usage follows `messageStop` in a `metadata` event, so the end is told once the wire is done; a stream
   * without `messageStop` was cut short, and the runtime reports it.
   */
  *finish(): Generator<ModelStreamEvent> {
    if (this.stopped) yield { type: "message_stop" };
  }

  private *start(): Generator<ModelStreamEvent> {
    if (this.started) return;
    this.started = true;
    yield { type: "message_start", id: this.id, model: this.model, usage: createUsage() };
  }

  private *blockStart(start: ContentBlockStart): Generator<ModelStreamEvent> {
    const wireIndex = start.contentBlockIndex ?? 0;
    const member = start.start;
    if (member?.toolUse !== undefined) {
      yield* this.announce(this.open(wireIndex, "tool_use"), {
        type: "tool_use",
        id: member.toolUse.toolUseId ?? "",
        name: member.toolUse.name ?? "",
        input: {},
      });
    } else if (member !== undefined) {
      yield* this.announce(this.open(wireIndex, "unknown"), unknownBlock(member));
    }
  }

  private *blockDelta(event: ContentBlockDelta): Generator<ModelStreamEvent> {
    const wireIndex = event.contentBlockIndex ?? 0;
    const delta = event.delta;
    if (delta === undefined) return;
    if (typeof delta.text === "string") {
      const block = this.open(wireIndex, "text");
      yield* this.announce(block, { type: "text", text: "" });
      if (delta.text.length > 0) yield { type: "text_delta", index: block.index, text: delta.text };
    } else if (delta.toolUse !== undefined) {
      const block = this.open(wireIndex, "tool_use");
      yield* this.announce(block, { type: "tool_use", id: "", name: "", input: {} });
      yield { type: "tool_input_delta", index: block.index, partialJson: delta.toolUse.input ?? "" };
    } else if (delta.reasoningContent !== undefined) {
      const reasoning = delta.reasoningContent;
      if (reasoning.redactedContent !== undefined) {
        const block = this.open(wireIndex, "redacted_thinking");
        block.redacted = [...(block.redacted ?? []), Buffer.from(reasoning.redactedContent)];
        return;
      }
      const block = this.open(wireIndex, "thinking");
      yield* this.announce(block, { type: "thinking", thinking: "" });
      if (typeof reasoning.text === "string" && reasoning.text.length > 0) {
        yield { type: "thinking_delta", index: block.index, thinking: reasoning.text };
      }
      if (typeof reasoning.signature === "string") {
        yield { type: "signature_delta", index: block.index, signature: reasoning.signature };
      }
    } else {
      // Citations, tool-result and image deltas have no core counterpart; keep them as unknown blocks.
      yield* this.announce(this.open(wireIndex, "unknown"), unknownBlock(delta));
    }
  }

  private *blockStop(wireIndex: number): Generator<ModelStreamEvent> {
    const block = this.blocks.get(wireIndex);
    if (block === undefined) return;
    if (block.redacted !== undefined) {
      yield* this.announce(block, {
        type: "redacted_thinking",
        data: Buffer.concat(block.redacted).toString("base64"),
      });
    }
    if (block.announced) yield { type: "block_stop", index: block.index };
  }

  private *messageStop(event: MessageStop): Generator<ModelStreamEvent> {
    this.stopped = true;
    const raw = event.stopReason;
    const stopSequence = stopSequenceOf(event.additionalModelResponseFields);
    yield {
      type: "message_delta",
      stopReason: normalizeBedrockStopReason(raw),
      ...(raw === undefined ? {} : { rawStopReason: raw }),
      ...(stopSequence === undefined ? {} : { stopSequence }),
    };
  }

  private open(wireIndex: number, kind: ContentBlock["type"]): OpenBlock {
    const existing = this.blocks.get(wireIndex);
    if (existing) return existing;
    const block: OpenBlock = { index: this.nextIndex, kind, announced: false };
    this.nextIndex += 1;
    this.blocks.set(wireIndex, block);
    return block;
  }

  private *announce(block: OpenBlock, initial: ContentBlock): Generator<ModelStreamEvent> {
    if (block.announced) return;
    block.announced = true;
    yield { type: "block_start", index: block.index, block: initial };
  }
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
