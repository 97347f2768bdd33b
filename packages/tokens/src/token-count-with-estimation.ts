import { type Message, type Usage, usageContextTokens } from "@unforget/core";
import { messageTokensWith } from "./estimate-message-tokens.ts";
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

/**
 * Finds the anchor: the last assistant message with usage, then walks back over the messages that came from
 * the same response (parallel tool calls split into several assistant messages, interleaved with tool
 * results) to the first of them. Returns -1 when no assistant message has usage.
 */
export function findUsageAnchor(
  messages: readonly CountableMessage[],
  from = messages.length - 1,
  stopBefore = 0,
): number {
  for (let index = from; index >= stopBefore; index--) {
    const message = messages[index];
    if (message === undefined || message.role !== "assistant" || message.usage === undefined) continue;
    return walkBackToResponseStart(messages, index);
  }
  return -1;
}

function walkBackToResponseStart(messages: readonly CountableMessage[], index: number): number {
  const responseId = messages[index]?.responseId;
  if (responseId === undefined) return index;
  let first = index;
  for (let previous = index - 1; previous >= 0; previous--) {
    const message = messages[previous]!;
    if (message.role !== "assistant") continue;
    if (message.responseId !== responseId) break;
    first = previous;
  }
  return first;
}

/** The usage of the response the anchor opens; shared with the incremental session. */
export function anchorUsage(messages: readonly CountableMessage[], anchorIndex: number): Usage | undefined {
  // The usage is on the last split message of the response at the latest; any of them carries the same.
  const responseId = messages[anchorIndex]?.responseId;
  let usage = messages[anchorIndex]?.usage;
  if (responseId === undefined) return usage;
  for (let index = anchorIndex + 1; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== "assistant") continue;
    if (message.responseId !== responseId) break;
    usage = message.usage ?? usage;
  }
  return usage;
}

function countWith(
  messages: readonly CountableMessage[],
  options: ResolvedTokenEstimatorOptions,
  preambleTokens: number,
): ContextTokenCount {
  const anchorIndex = findUsageAnchor(messages);
  const usage = anchorIndex >= 0 ? anchorUsage(messages, anchorIndex) : undefined;
  let estimate = 0;
  for (let index = anchorIndex + 1; index < messages.length; index++) {
    estimate += messageTokensWith(messages[index]!, options);
  }
  return contextTokenCount(
    anchorIndex,
    usage === undefined ? undefined : usageContextTokens(usage),
    estimate,
    options.padding,
    preambleTokens,
  );
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
    const estimatedTokens = Math.ceil(estimate * padding) + preambleTokens;
    return {
      tokens: estimatedTokens,
      anchorTokens: 0,
      estimatedTokens,
      anchorIndex: -1,
      method: "heuristic",
    };
  }
  const estimatedTokens = Math.ceil(estimate * padding);
  return {
    tokens: anchorTokens + estimatedTokens,
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
  return countWith(messages, resolveTokenEstimatorOptions(options), Math.max(0, options.preambleTokens ?? 0));
}

/**
 * The context size before a model call: the window occupancy reported with the last response (input + cache
 * creation + cache read + output, anchored on the first message of that response) plus the padded estimate of
 * every message added since. Without any usage, the padded estimate of all messages. Never throws.
 */
export function tokenCountWithEstimation(
  messages: readonly CountableMessage[],
  options: TokenCountWithEstimationOptions = {},
): number {
  return measureContextTokens(messages, options).tokens;
}
