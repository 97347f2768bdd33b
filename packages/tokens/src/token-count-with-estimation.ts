import type { Message } from "@unforget/core";
import { assertMessageList, isRecord, messageTokensWith } from "./estimate-message-tokens.ts";
import { addCounts, toCount } from "./finite-count.ts";
import {
  type ResolvedTokenEstimatorOptions,
  resolveTokenEstimatorOptions,
  type TokenEstimatorOptions,
} from "./token-estimator-options.ts";

/** The parts of a message the anchored count reads. `Message` is assignable to it. */
export type CountableMessage = Pick<Message, "role" | "content" | "usage" | "responseId"> & { id?: string };

export interface TokenCountWithEstimationOptions extends TokenEstimatorOptions {
  /** Tokens of the system prompt and tools, added only when no message carries usage yet. */
  preambleTokens?: number;
}

/** How a context size was obtained. */
export interface ContextTokenCount {
  /** Anchored usage plus the padded estimate of everything after the anchor. */
  tokens: number;
  /** Window occupancy the provider reported at the anchor (0 without an anchor). */
  anchorTokens: number;
  /** Padded estimate of the messages after the anchor (or of all messages and the preamble, without one). */
  estimatedTokens: number;
  /** Index of the first message of the anchoring response, or -1 when nothing carries usage. */
  anchorIndex: number;
  /** "usage-anchored" when a provider usage was found, else "heuristic". */
  method: "usage-anchored" | "heuristic";
}

const USAGE_FIELDS = [
  "inputTokens",
  "cacheCreationInputTokens",
  "cacheReadInputTokens",
  "outputTokens",
] as const;

/**
 * Window occupancy a usage reports (input + cache creation + cache read + output), or undefined when it is not
 * a usage: not an object, no field at all, or a field that is not a finite non-negative number (a corrupt
 * transcript). A missing field counts 0 (plain-JavaScript callers leave the cache fields out).
 */
export function usageTokens(usage: unknown): number | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  let total = 0;
  let fields = 0;
  for (const field of USAGE_FIELDS) {
    const value = (usage as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (typeof value !== "number" || !(value >= 0) || !Number.isFinite(value)) return undefined;
    total += value;
    fields++;
  }
  return fields > 0 && Number.isFinite(total) ? toCount(total) : undefined;
}

const isMessage = isRecord as (value: unknown) => value is CountableMessage;

/**
 * The anchor: the last assistant message with a valid usage (its window occupancy is the anchor's), walked
 * back over the messages that came from the same response (parallel tool calls split into several assistant
 * messages, interleaved with tool results) to the first of them. Entries that are not objects are skipped.
 */
function locateUsageAnchor(
  messages: readonly CountableMessage[],
  from: number,
  stopBefore: number,
): { index: number; tokens: number } | undefined {
  for (let index = from; index >= stopBefore; index--) {
    const message = messages[index];
    if (!isMessage(message) || message.role !== "assistant") continue;
    const tokens = usageTokens(message.usage);
    if (tokens !== undefined) return { index: walkBackToResponseStart(messages, index), tokens };
  }
  return undefined;
}

/**
 * Finds the anchor: the last assistant message with a valid usage, then walks back over the messages that
 * came from the same response to the first of them. Returns -1 when no assistant message has a valid usage.
 */
export function findUsageAnchor(
  messages: readonly CountableMessage[],
  from = messages.length - 1,
  stopBefore = 0,
): number {
  assertMessageList(messages, "findUsageAnchor");
  return locateUsageAnchor(messages, from, stopBefore)?.index ?? -1;
}

function walkBackToResponseStart(messages: readonly CountableMessage[], index: number): number {
  const responseId = messages[index]?.responseId;
  if (responseId === undefined) return index;
  let first = index;
  for (let previous = index - 1; previous >= 0; previous--) {
    const message = messages[previous];
    if (!isMessage(message) || message.role !== "assistant") continue;
    if (message.responseId !== responseId) break;
    first = previous;
  }
  return first;
}

function countWith(
  messages: readonly CountableMessage[],
  options: ResolvedTokenEstimatorOptions,
  preambleTokens: number,
): ContextTokenCount {
  const anchor = locateUsageAnchor(messages, messages.length - 1, 0);
  const anchorIndex = anchor?.index ?? -1;
  let estimate = 0;
  for (let index = anchorIndex + 1; index < messages.length; index++) {
    estimate += messageTokensWith(messages[index]!, options);
  }
  return contextTokenCount(anchorIndex, anchor?.tokens, estimate, options.padding, preambleTokens);
}

/**
 * The count from its parts: the anchor's window occupancy (undefined without an anchor: then the preamble is
 * added instead) plus the padded estimate of what follows. Shared with the incremental session.
 */
export function contextTokenCount(
  anchorIndex: number,
  anchorTokens: number | undefined,
  estimate: number,
  padding: number,
  preambleTokens: number,
): ContextTokenCount {
  if (anchorTokens === undefined) {
    const estimatedTokens = addCounts(toCount(estimate * padding), preambleTokens);
    return {
      tokens: estimatedTokens,
      anchorTokens: 0,
      estimatedTokens,
      anchorIndex: -1,
      method: "heuristic",
    };
  }
  const estimatedTokens = toCount(estimate * padding);
  return {
    tokens: addCounts(anchorTokens, estimatedTokens),
    anchorTokens,
    estimatedTokens,
    anchorIndex,
    method: "usage-anchored",
  };
}

/** `tokenCountWithEstimation` with the anchor and the estimated part reported separately. */
export function measureContextTokens(
  messages: readonly CountableMessage[],
  options: TokenCountWithEstimationOptions = {},
): ContextTokenCount {
  assertMessageList(messages, "measureContextTokens");
  return countWith(messages, resolveTokenEstimatorOptions(options), preambleTokensOf(options));
}

/** The `preambleTokens` option as a count: anything but a non-negative number counts 0. */
export function preambleTokensOf(options: TokenCountWithEstimationOptions): number {
  const value = typeof options === "object" && options !== null ? options.preambleTokens : undefined;
  return typeof value === "number" ? toCount(value) : 0;
}

/**
 * The context size before a model call: the window occupancy reported with the last response (input + cache
 * creation + cache read + output, anchored on the first message of that response) plus the padded estimate of
 * every message added since. Without any usage, the padded estimate of all messages. A whole number in
 * [0, MAX_COUNTED_TOKENS]; entries and usages of the wrong shape are estimated or skipped, never thrown on.
 * Throws `InvalidMessageError` only when `messages` is not an array.
 */
export function tokenCountWithEstimation(
  messages: readonly CountableMessage[],
  options: TokenCountWithEstimationOptions = {},
): number {
  assertMessageList(messages, "tokenCountWithEstimation");
  return measureContextTokens(messages, options).tokens;
}
