import type { ContentBlock, DocumentBlock, ImageBlock, RequestMessage } from "@unforget/core";
import { estimateTextTokensExact } from "./estimate-text-tokens.ts";
import type { EstimatorProfile } from "./estimator-coefficients.ts";
import {
  type ResolvedTokenEstimatorOptions,
  resolveTokenEstimatorOptions,
  type TokenEstimatorOptions,
} from "./token-estimator-options.ts";

/** Anthropic resizes images so the long edge is at most 1,568 px and the area about 1.15 megapixels. */
const IMAGE_MAX_EDGE = 1_568;
const IMAGE_MAX_PIXELS = 1_150_000;
const PIXELS_PER_IMAGE_TOKEN = 750;

/**
 * Anthropic's published rule for images: width × height / 750 after the API's downscaling. Falls back to the
 * flat `fallbackTokens` when a dimension is missing or not a positive number.
 */
export function estimateImageTokens(
  width: number | undefined,
  height: number | undefined,
  fallbackTokens: number,
): number {
  if (width === undefined || height === undefined || !(width > 0) || !(height > 0)) return fallbackTokens;
  const scale = Math.min(
    1,
    IMAGE_MAX_EDGE / Math.max(width, height),
    Math.sqrt(IMAGE_MAX_PIXELS / (width * height)),
  );
  return Math.ceil((width * scale * (height * scale)) / PIXELS_PER_IMAGE_TOKEN);
}

/** JSON text of a value for counting; never throws (circular or BigInt values fall back to `String`). */
export function stringifyForCounting(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    try {
      return String(value);
    } catch {
      // A null-prototype object with a cycle has neither JSON nor a string form.
      return "";
    }
  }
}

/** Per-part estimate of one message, so a caller can treat thinking or media differently. */
export interface MessageTokenBreakdown {
  /** Text, tool names and inputs, tool results and unknown blocks. */
  contentTokens: number;
  /** Thinking and redacted thinking, before any thinking budget is applied. */
  thinkingTokens: number;
  /** Images and documents. */
  mediaTokens: number;
  /** Role and framing overhead. */
  overheadTokens: number;
}

function imageTokens(block: ImageBlock, options: ResolvedTokenEstimatorOptions): number {
  return estimateImageTokens(block.width, block.height, options.imageTokens);
}

function documentTokens(
  block: DocumentBlock,
  options: ResolvedTokenEstimatorOptions,
  profile: EstimatorProfile,
): number {
  if (block.source.type === "text") return estimateTextTokensExact(block.source.data, profile);
  if (block.pages !== undefined && block.pages > 0) return block.pages * options.documentPageTokens;
  return options.documentTokens;
}

function addBlock(
  block: ContentBlock,
  options: ResolvedTokenEstimatorOptions,
  into: MessageTokenBreakdown,
): void {
  const profile = options.profile;
  switch (block.type) {
    case "text":
      into.contentTokens += estimateTextTokensExact(block.text, profile);
      return;
    case "tool_use":
      into.contentTokens +=
        estimateTextTokensExact(block.name, profile) +
        estimateTextTokensExact(stringifyForCounting(block.input), profile);
      return;
    case "tool_result":
      if (typeof block.content === "string") {
        into.contentTokens += estimateTextTokensExact(block.content, profile);
      } else {
        for (const part of block.content) addBlock(part, options, into);
      }
      return;
    case "thinking":
      into.thinkingTokens += estimateTextTokensExact(block.thinking, profile);
      return;
    case "redacted_thinking":
      into.thinkingTokens += estimateTextTokensExact(block.data, profile);
      return;
    case "image":
      into.mediaTokens += imageTokens(block, options);
      return;
    case "document":
      into.mediaTokens += documentTokens(block, options, profile);
      return;
    default:
      into.contentTokens += estimateTextTokensExact(stringifyForCounting(block.original), profile);
  }
}

/** Unrounded, unpadded per-part estimate of one message. */
export function estimateMessageBreakdown(
  message: RequestMessage,
  options: TokenEstimatorOptions = {},
): MessageTokenBreakdown {
  return breakdownWith(message, resolveTokenEstimatorOptions(options));
}

export function breakdownWith(
  message: RequestMessage,
  options: ResolvedTokenEstimatorOptions,
): MessageTokenBreakdown {
  const breakdown: MessageTokenBreakdown = {
    contentTokens: 0,
    thinkingTokens: 0,
    mediaTokens: 0,
    overheadTokens: options.messageOverheadTokens,
  };
  for (const block of message.content) addBlock(block, options, breakdown);
  return breakdown;
}

/** Unrounded total of a message with resolved options; thinking is capped at the thinking budget. */
export function messageTokensWith(message: RequestMessage, options: ResolvedTokenEstimatorOptions): number {
  const breakdown = breakdownWith(message, options);
  return (
    breakdown.contentTokens +
    Math.min(breakdown.thinkingTokens, options.thinkingBudgetTokens) +
    breakdown.mediaTokens +
    breakdown.overheadTokens
  );
}

/**
 * Estimated tokens of one message: text, tool name + JSON input, tool results, thinking (up to the thinking
 * budget), images (width × height / 750 or a flat default), documents, and the per-message overhead.
 * Unpadded best guess; never throws.
 */
export function estimateMessageTokens(message: RequestMessage, options: TokenEstimatorOptions = {}): number {
  return Math.ceil(messageTokensWith(message, resolveTokenEstimatorOptions(options)));
}

/** Estimated tokens of a list of messages (sum of `estimateMessageTokens`, rounded once). Unpadded. */
export function estimateMessagesTokens(
  messages: readonly RequestMessage[],
  options: TokenEstimatorOptions = {},
): number {
  const resolved = resolveTokenEstimatorOptions(options);
  let total = 0;
  for (const message of messages) total += messageTokensWith(message, resolved);
  return Math.ceil(total);
}
