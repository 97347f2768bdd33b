import { assertMessageList, isRecord, messageTokensWith } from "./estimate-message-tokens.ts";
import {
  type ContextTokenCount,
  type CountableMessage,
  contextTokenCount,
  preambleTokensOf,
  type TokenCountWithEstimationOptions,
  usageTokens,
} from "./token-count-with-estimation.ts";
import { resolveTokenEstimatorOptions } from "./token-estimator-options.ts";

export interface TokenCountSession {
  /**
   * Called before each model call with the whole current message list. Gives the same result as
   * `measureContextTokens`, but only the messages added since the previous call are estimated as long as the
   * list only grew; anything else (compaction, rewind, edits) is detected and recounted from scratch. A message
   * after the anchor that was replaced by a new object is estimated again; one mutated in place is not seen.
   */
  count(messages: readonly CountableMessage[]): ContextTokenCount;
  /** Forgets the remembered anchor and estimates; the next `count` starts over. */
  reset(): void;
}

/** What a session remembers between counts. */
interface CountSessionState {
  resolved: ReturnType<typeof resolveTokenEstimatorOptions>;
  preambleTokens: number;
  anchorIndex: number;
  anchorMessage: CountableMessage | undefined;
  anchorTokens: number;
  // Estimates of messages anchorIndex+1 … seen-1, the message objects they were made from, and their sum.
  estimates: number[];
  estimated: CountableMessage[];
  estimateSum: number;
  seen: number;
  lastSeen: CountableMessage | undefined;
  // The run of assistant messages from one response that ends the messages seen so far: where it starts and
  // its response id (a message without one is a run of its own).
  runStart: number;
  runResponseId: string | undefined;
}

/** Forgets the anchor and every estimate. */
function resetCounts(state: CountSessionState): void {
  state.anchorIndex = -1;
  state.anchorMessage = undefined;
  state.anchorTokens = 0;
  state.estimates = [];
  state.estimated = [];
  state.estimateSum = 0;
  state.seen = 0;
  state.lastSeen = undefined;
  state.runStart = -1;
  state.runResponseId = undefined;
}

function idOf(message: unknown): unknown {
  return isRecord(message) ? message.id : undefined;
}

function sameMessage(a: CountableMessage | undefined, b: CountableMessage | undefined): boolean {
  return a === b || (idOf(a) !== undefined && idOf(a) === idOf(b));
}

/** Whether `messages` only grew since the last count: the last message seen and the anchor are still there. */
function stillValid(state: CountSessionState, messages: readonly CountableMessage[]): boolean {
  return (
    messages.length >= state.seen &&
    (state.seen === 0 || sameMessage(messages[state.seen - 1], state.lastSeen)) &&
    (state.anchorIndex < 0 || sameMessage(messages[state.anchorIndex], state.anchorMessage))
  );
}

/**
 * The new messages, in order: follow the runs of assistant messages split from one response, and take the last
 * one with a valid usage as the anchor (where findUsageAnchor would land, without walking back over a long run
 * on every turn). Index -1: no new anchor.
 */
function findNewAnchor(
  state: CountSessionState,
  messages: readonly CountableMessage[],
): { index: number; tokens: number } {
  let index = -1;
  let tokens = 0;
  for (let at = state.seen; at < messages.length; at++) {
    const message = messages[at];
    if (!isRecord(message) || message.role !== "assistant") continue;
    const responseId = message.responseId;
    if (responseId === undefined || responseId !== state.runResponseId) {
      state.runStart = at;
      state.runResponseId = responseId;
    }
    const usage = usageTokens(message.usage);
    if (usage !== undefined) {
      index = state.runStart;
      tokens = usage;
    }
  }
  return { index, tokens };
}

/** Re-anchors: keeps the cached estimates of messages after the new anchor, drops the rest. */
function moveAnchor(
  state: CountSessionState,
  messages: readonly CountableMessage[],
  anchor: number,
  tokens: number,
) {
  const keepFrom = anchor + 1 - (state.anchorIndex + 1);
  if (keepFrom > 0) {
    state.estimates = state.estimates.slice(Math.min(keepFrom, state.estimates.length));
    state.estimated = state.estimated.slice(Math.min(keepFrom, state.estimated.length));
    state.estimateSum = 0;
    for (const value of state.estimates) state.estimateSum += value;
  }
  state.anchorIndex = anchor;
  state.anchorMessage = messages[anchor];
  state.anchorTokens = tokens;
}

/**
 * A message after the anchor replaced by another object (a tool result swapped for a preview, an edit that kept
 * the id) is estimated again; the anchor's usage already covers everything before it. Then the messages not
 * seen before are estimated.
 */
function updateEstimates(state: CountSessionState, messages: readonly CountableMessage[]): void {
  const { estimates, estimated, resolved } = state;
  for (let offset = 0; offset < estimated.length; offset++) {
    const message = messages[state.anchorIndex + 1 + offset]!;
    if (message === estimated[offset]) continue;
    const value = messageTokensWith(message, resolved);
    state.estimateSum += value - estimates[offset]!;
    estimates[offset] = value;
    estimated[offset] = message;
  }
  for (let index = Math.max(state.seen, state.anchorIndex + 1); index < messages.length; index++) {
    const message = messages[index]!;
    const value = messageTokensWith(message, resolved);
    estimates.push(value);
    estimated.push(message);
    state.estimateSum += value;
  }
}

function countMessages(state: CountSessionState, messages: readonly CountableMessage[]): ContextTokenCount {
  assertMessageList(messages, "TokenCountSession.count");
  if (!stillValid(state, messages)) resetCounts(state);
  const anchor = findNewAnchor(state, messages);
  if (anchor.index >= 0) moveAnchor(state, messages, anchor.index, anchor.tokens);
  updateEstimates(state, messages);
  state.seen = messages.length;
  state.lastSeen = messages[state.seen - 1];
  return contextTokenCount(
    state.anchorIndex,
    state.anchorIndex < 0 ? undefined : state.anchorTokens,
    state.estimateSum,
    state.resolved.padding,
    state.preambleTokens,
  );
}

/**
 * Incremental `tokenCountWithEstimation`: remembers the anchor and the per-message estimates after it, so a
 * new turn costs only its own messages. Detects a list that was replaced or rewritten by comparing the
 * message objects it has seen (identity, or `id` when present).
 */
export function createTokenCountSession(options: TokenCountWithEstimationOptions = {}): TokenCountSession {
  const state: CountSessionState = {
    resolved: resolveTokenEstimatorOptions(options),
    preambleTokens: preambleTokensOf(options),
    anchorIndex: -1,
    anchorMessage: undefined,
    anchorTokens: 0,
    estimates: [],
    estimated: [],
    estimateSum: 0,
    seen: 0,
    lastSeen: undefined,
    runStart: -1,
    runResponseId: undefined,
  };
  return {
    count: (messages) => countMessages(state, messages),
    reset: () => resetCounts(state),
  };
}
