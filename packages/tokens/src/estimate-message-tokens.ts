import { InvalidMessageError, type RequestMessage } from "@unforget/core";
import { estimateTextTokensExact } from "./estimate-text-tokens.ts";
import type { EstimatorProfile } from "./estimator-coefficients.ts";
import { MAX_COUNTED_TOKENS, toCount } from "./finite-count.ts";
import { stringifyForCounting } from "./stringify-for-counting.ts";
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
 * Pages counted for one document at most: above every provider's page limit, so no real document is
 * affected, while `pages × documentPageTokens` of a bogus count (`1e308`) stays finite and still far past
 * every window.
 */
export const MAX_DOCUMENT_PAGES = 10_000;

const isPositiveFinite = (value: unknown): value is number =>
  typeof value === "number" && value > 0 && Number.isFinite(value);

/**
 * Anthropic's published rule for images: width × height / 750 after the API's downscaling, so never more than
 * ~1,534 tokens and at least 1. Falls back to the flat `fallbackTokens` when a dimension is missing or not a
 * positive finite number (no real image has it).
 */
export function estimateImageTokens(
  width: number | undefined,
  height: number | undefined,
  fallbackTokens: number,
): number {
  if (!isPositiveFinite(width) || !isPositiveFinite(height)) return fallbackTokens;
  // Scale the edges before multiplying them: the product of two huge edges overflows to Infinity.
  const edgeScale = Math.min(1, IMAGE_MAX_EDGE / Math.max(width, height));
  let scaledWidth = width * edgeScale;
  let scaledHeight = height * edgeScale;
  const areaScale = Math.min(1, Math.sqrt(IMAGE_MAX_PIXELS / (scaledWidth * scaledHeight)));
  scaledWidth = Math.max(1, scaledWidth * areaScale);
  scaledHeight = Math.max(1, scaledHeight * areaScale);
  return Math.ceil((scaledWidth * scaledHeight) / PIXELS_PER_IMAGE_TOKEN);
}

/** Per-part estimate of one message, so a caller can treat thinking or media differently. */
export interface MessageTokenBreakdown {
  /** Text, tool names and inputs, tool results, unknown blocks and values of the wrong type (as JSON text). */
  contentTokens: number;
  /** Thinking and redacted thinking, before any thinking budget is applied. */
  thinkingTokens: number;
  /** Images and documents. */
  mediaTokens: number;
  /** Role and framing overhead. */
  overheadTokens: number;
}

type Fields = Record<string, unknown>;

export const isRecord = (value: unknown): value is Fields => typeof value === "object" && value !== null;

/** Unrounded estimate of a value that should be text: a string as text, anything else as its JSON text. */
export function textTokens(value: unknown, profile: EstimatorProfile): number {
  return estimateTextTokensExact(typeof value === "string" ? value : stringifyForCounting(value), profile);
}

function documentTokens(block: Fields, options: ResolvedTokenEstimatorOptions): number {
  const source = block.source;
  if (isRecord(source) && source.type === "text") return textTokens(source.data, options.profile);
  const pages = block.pages;
  if (isPositiveFinite(pages))
    return Math.ceil(Math.min(pages, MAX_DOCUMENT_PAGES)) * options.documentPageTokens;
  return options.documentTokens;
}

/**
 * Adds the blocks of a content list into `into`. Iterative, so tool results nested deeper than the call stack
 * are walked like flat ones; a block of an unknown or wrong shape is counted as its JSON text.
 */
function addContent(
  content: unknown,
  options: ResolvedTokenEstimatorOptions,
  into: MessageTokenBreakdown,
): void {
  const profile = options.profile;
  const pending: unknown[] = [content];
  while (pending.length > 0) {
    const item = pending.pop();
    if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) pending.push(item[index]);
      continue;
    }
    if (!isRecord(item)) {
      into.contentTokens += textTokens(item, profile);
      continue;
    }
    switch (item.type) {
      case "text":
        into.contentTokens += textTokens(item.text, profile);
        break;
      case "tool_use":
        into.contentTokens +=
          textTokens(item.name, profile) + textTokens(stringifyForCounting(item.input), profile);
        break;
      case "tool_result":
        // A string, a list of blocks, or (from untyped callers) anything else, which is counted as JSON text.
        if (typeof item.content === "string" || Array.isArray(item.content)) pending.push(item.content);
        else into.contentTokens += textTokens(item.content, profile);
        break;
      case "thinking":
        into.thinkingTokens += textTokens(item.thinking, profile);
        break;
      case "redacted_thinking":
        into.thinkingTokens += textTokens(item.data, profile);
        break;
      case "image":
        into.mediaTokens += estimateImageTokens(
          item.width as number | undefined,
          item.height as number | undefined,
          options.imageTokens,
        );
        break;
      case "document":
        into.mediaTokens += documentTokens(item, options);
        break;
      default:
        into.contentTokens += textTokens(item.original ?? item, profile);
    }
  }
}

/** Unrounded, unpadded per-part estimate of one message. Never throws. */
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
  // A message that is not an object is counted whole; a string content is text (the SDK shorthand).
  addContent(isRecord(message) ? message.content : message, options, breakdown);
  return breakdown;
}

/**
 * Unrounded total of a message with resolved options; thinking is capped at the thinking budget and the total
 * at `MAX_COUNTED_TOKENS`, so sums and differences of totals stay finite.
 */
export function messageTokensWith(message: RequestMessage, options: ResolvedTokenEstimatorOptions): number {
  const breakdown = breakdownWith(message, options);
  const total =
    breakdown.contentTokens +
    Math.min(breakdown.thinkingTokens, options.thinkingBudgetTokens) +
    breakdown.mediaTokens +
    breakdown.overheadTokens;
  return Math.min(total, MAX_COUNTED_TOKENS);
}

/**
 * Estimated tokens of one message: text, tool name + JSON input, tool results, thinking (up to the thinking
 * budget), images (width × height / 750 or a flat default), documents, and the per-message overhead.
 * Unpadded best guess; a value of the wrong type is counted as its JSON text. Never throws; always a whole
 * number in [0, MAX_COUNTED_TOKENS].
 */
export function estimateMessageTokens(message: RequestMessage, options: TokenEstimatorOptions = {}): number {
  return toCount(messageTokensWith(message, resolveTokenEstimatorOptions(options)));
}

/** Throws `InvalidMessageError` when a message list is not an array (a caller's mistake, not bad data). */
export function assertMessageList(messages: unknown, caller: string): void {
  if (Array.isArray(messages)) return;
  throw new InvalidMessageError(
    `${caller}: messages is ${messages === null ? "null" : typeof messages}, which is not an array of messages; ` +
      "pass the conversation's message list (an empty array when there is none).",
  );
}

/**
 * Estimated tokens of a list of messages (sum of `estimateMessageTokens`, rounded once). Unpadded. Throws
 * `InvalidMessageError` only when `messages` is not an array.
 */
export function estimateMessagesTokens(
  messages: readonly RequestMessage[],
  options: TokenEstimatorOptions = {},
): number {
  assertMessageList(messages, "estimateMessagesTokens");
  const resolved = resolveTokenEstimatorOptions(options);
  let total = 0;
  for (const message of messages) total += messageTokensWith(message, resolved);
  return toCount(total);
}
