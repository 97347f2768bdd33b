import type {
  ContentBlock as BedrockContentBlock,
  ConverseResponse,
  TokenUsage,
} from "@aws-sdk/client-bedrock-runtime";
import type { ContentBlock, ModelResponse, StopReason, Usage } from "@unforget/core";
import { isRecord } from "./is-record.ts";

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
  if (isRecord(block)) {
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
  if (isRecord(fields) && typeof fields.stop_sequence === "string") return fields.stop_sequence;
  return undefined;
}
