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

/**
 * Incremental `tokenCountWithEstimation`: remembers the anchor and the per-message estimates after it, so a
 * new turn costs only its own messages. Detects a list that was replaced or rewritten by comparing the
 * message objects it has seen (identity, or `id` when present).
 */
export function createTokenCountSession(options: TokenCountWithEstimationOptions = {}): TokenCountSession {
  const resolved = resolveTokenEstimatorOptions(options);
  const preambleTokens = preambleTokensOf(options);
  let anchorIndex = -1;
  let anchorMessage: CountableMessage | undefined;
  let anchorTokens = 0;
  // Estimates of messages anchorIndex+1 … seen-1, the message objects they were made from, and their sum.
  let estimates: number[] = [];
  let estimated: CountableMessage[] = [];
  let estimateSum = 0;
  let seen = 0;
  let lastSeen: CountableMessage | undefined;
  // The run of assistant messages from one response that ends the messages seen so far: where it starts and
  // its response id (a message without one is a run of its own).
  let runStart = -1;
  let runResponseId: string | undefined;

  const reset = () => {
    anchorIndex = -1;
    anchorMessage = undefined;
    anchorTokens = 0;
    estimates = [];
    estimated = [];
    estimateSum = 0;
    seen = 0;
    lastSeen = undefined;
    runStart = -1;
    runResponseId = undefined;
  };

  const idOf = (message: unknown) => (isRecord(message) ? message.id : undefined);
  const same = (a: CountableMessage | undefined, b: CountableMessage | undefined) =>
    a === b || (idOf(a) !== undefined && idOf(a) === idOf(b));

  const stillValid = (messages: readonly CountableMessage[]) =>
    messages.length >= seen &&
    (seen === 0 || same(messages[seen - 1], lastSeen)) &&
    (anchorIndex < 0 || same(messages[anchorIndex], anchorMessage));

  return {
    count(messages) {
      assertMessageList(messages, "TokenCountSession.count");
      if (!stillValid(messages)) reset();
      // The new messages, in order: follow the runs of assistant messages split from one response, and take
      // the last one with a valid usage as the anchor (where findUsageAnchor would land, without walking back
      // over a long run on every turn).
      let newAnchor = -1;
      let newAnchorTokens = 0;
      for (let index = seen; index < messages.length; index++) {
        const message = messages[index];
        if (!isRecord(message) || message.role !== "assistant") continue;
        const responseId = message.responseId;
        if (responseId === undefined || responseId !== runResponseId) {
          runStart = index;
          runResponseId = responseId;
        }
        const tokens = usageTokens(message.usage);
        if (tokens !== undefined) {
          newAnchor = runStart;
          newAnchorTokens = tokens;
        }
      }
      if (newAnchor >= 0) {
        // Re-anchor: keep the cached estimates of messages after the new anchor, drop the rest.
        const keepFrom = newAnchor + 1 - (anchorIndex + 1);
        if (keepFrom > 0) {
          estimates = estimates.slice(Math.min(keepFrom, estimates.length));
          estimated = estimated.slice(Math.min(keepFrom, estimated.length));
          estimateSum = 0;
          for (const value of estimates) estimateSum += value;
        }
        anchorIndex = newAnchor;
        anchorMessage = messages[newAnchor];
        anchorTokens = newAnchorTokens;
      }
      // A message after the anchor replaced by another object (a tool result swapped for a preview, an edit
      // that kept the id) is estimated again; the anchor's usage already covers everything before it.
      for (let offset = 0; offset < estimated.length; offset++) {
        const message = messages[anchorIndex + 1 + offset]!;
        if (message === estimated[offset]) continue;
        const value = messageTokensWith(message, resolved);
        estimateSum += value - estimates[offset]!;
        estimates[offset] = value;
        estimated[offset] = message;
      }
      for (let index = Math.max(seen, anchorIndex + 1); index < messages.length; index++) {
        const message = messages[index]!;
        const value = messageTokensWith(message, resolved);
        estimates.push(value);
        estimated.push(message);
        estimateSum += value;
      }
      seen = messages.length;
      lastSeen = messages[seen - 1];
      return contextTokenCount(
        anchorIndex,
        anchorIndex < 0 ? undefined : anchorTokens,
        estimateSum,
        resolved.padding,
        preambleTokens,
      );
    },
    reset,
  };
}
