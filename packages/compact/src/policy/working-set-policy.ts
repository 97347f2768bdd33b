import type { Message } from "@unforget/core";
import { type ModelPricing, resolvePricing, UNKNOWN_MODEL_PRICING } from "@unforget/tokens";
import { CACHE_TTL_MS } from "../cache/prompt-cache.ts";
import {
  type ChangeableMessages,
  createChangeableMessages,
  settledMessages,
} from "../cache/settled-prefix.ts";
import { estimateOneMessageTokens } from "../conversation/conversation.ts";
import {
  COLLAPSE_PROTECT_SHARE,
  LADDER_COLLAPSE_PROTECT_ROUNDS,
  RECORD_TOKENS_PER_CALL,
  WORKING_SET_CEILING_SHARE,
  WORKING_SET_CLEAR_AT_LEAST_SHARE,
} from "../defaults.ts";
import { type CompactableTools, compactablePredicate } from "../tool-outputs/compactable-tools.ts";
import {
  type CompactionPolicy,
  createFixedLevelPolicy,
  type FixedLevelPolicyOptions,
  type WorkingSetLevels,
} from "./compaction-policy.ts";

export interface WorkingSetPolicyOptions extends FixedLevelPolicyOptions {
  /** The model's prices: its cache-read and cache-write rates, as shares of its input price, set the rent and the price of a break. Default the Sonnet tier (reads 0.1×, writes 1.25×). */
  pricing?: ModelPricing;
  /** How long the provider keeps the prompt cache: "5m" (default) or "1h" (writes then cost 2× input). */
  cacheTtl?: "5m" | "1h";
  /** Completed rounds at the end never folded; default 2, as the collapse layer. */
  protectRounds?: number;
  /** Recent rounds never folded, as a share of the threshold in tokens; default 0.05, as the collapse layer. */
  protectShare?: number;
  /**
   * Tools whose rounds the cheap layers may fold, as the manager decides it (reproducible tools, and the others
   * when there is a session folder to save them in); default `DEFAULT_COMPACTABLE_TOOLS`.
   */
  compactableTools?: CompactableTools;
  /**
   * A hard ceiling, as a share of the threshold: past it the cheap layers fall to the floor at once, whatever
   * rent has been paid (between, ski rental sets where the context falls). Default `WORKING_SET_CEILING_SHARE`.
   */
  ceilingShare?: number;
  /**
   * A fold between climbs must free at least this share of the threshold, as Anthropic's context editing asks
   * `clear_at_least` of a clearing: a smaller one is not worth its break. Default `WORKING_SET_CLEAR_AT_LEAST_SHARE`.
   */
  clearAtLeastShare?: number;
}

/** What the policy sees of the context's stale part at one call. */
interface StalePart {
  /** Tokens of the completed tool rounds the cheap layers would fold now (older than the protected tail). */
  tokens: number;
  /** Tokens after the settled part once the stale rounds are folded: what a fold writes again. */
  suffix: number;
  /** Tokens the fold frees (the rounds less their one-line records). */
  freed: number;
}

/**
 * The working-set policy: every token kept is read again on every later call (at a tenth of the input price
 * on a warm cache), so the context need not fill the window. Stale tool output — completed tool rounds older
 * than the protected tail — is folded into one-line records in one batch, at the moment ski rental says: once
 * the cache-read rent already paid on it since the last fold equals the one-time price of the break (writing again, instead
 * of reading, everything after the settled part). That rule pays at most twice what the
 * best choice made knowing the future would. After an idle gap longer than the cache lives the break is
 * free (the cache is cold), so the cheap layers act at once on all they can (stale rounds, and the records
 * of finished turns, which the collapse layer then condenses). Near the threshold, and for summaries, the
 * fixed-level rules apply unchanged. One policy object serves one manager (it keeps the rent paid).
 */
export function createWorkingSetPolicy(options: WorkingSetPolicyOptions = {}): CompactionPolicy {
  const fixed = createFixedLevelPolicy(options);
  const rates = resolvePricing(options.pricing ?? UNKNOWN_MODEL_PRICING);
  const ttl = options.cacheTtl ?? "5m";
  const input = rates.input > 0 ? rates.input : 1;
  const read = rates.cacheRead / input;
  const write = (ttl === "1h" ? rates.cacheWrite1h : rates.cacheWrite5m) / input;
  const protectRounds = options.protectRounds ?? LADDER_COLLAPSE_PROTECT_ROUNDS;
  const protectShare = options.protectShare ?? COLLAPSE_PROTECT_SHARE;
  const changeable = createChangeableMessages(
    options.compactableTools ? compactablePredicate(options.compactableTools) : undefined,
  );
  const ceilingShare = options.ceilingShare ?? WORKING_SET_CEILING_SHARE;
  const clearAtLeastShare = options.clearAtLeastShare ?? WORKING_SET_CLEAR_AT_LEAST_SHARE;
  let rent = 0;
  let levels: WorkingSetLevels | undefined;
  return {
    name: "working set",
    async plan(state) {
      const plan = await fixed.plan(state);
      const ceiling = Math.floor(state.threshold * Math.min(1, ceilingShare));
      const fall = (floor: number) => {
        rent = 0;
        levels = { ceiling: state.tokens, floor };
        return { ...plan, batch: true, target: 0, minimumFreedTokens: 0 };
      };
      if (plan.batch) {
        rent = 0;
        return plan;
      }
      const stale = stalePart(state.messages, {
        protectRounds,
        protectTokens: state.threshold * protectShare,
        changeable,
        tokensOf: estimateOneMessageTokens,
      });
      // A cold cache makes every break free: the cheap layers then act on whatever they can (stale rounds, and
      // the finished turns' records the collapse layer condenses).
      if (state.idleMs > CACHE_TTL_MS[ttl]) return fall(state.tokens - stale.freed);
      if (stale.tokens <= 0) return plan;
      const worthIt = stale.freed >= state.threshold * clearAtLeastShare;
      // Past the ceiling: fall to the floor in one break.
      if (state.tokens > ceiling && worthIt) return fall(state.tokens - stale.freed);
      // Between climbs: fold once the rent paid on the stale part equals the price of the break (ski rental).
      if (rent >= (write - read) * stale.suffix && worthIt) return fall(state.tokens - stale.freed);
      rent += read * stale.tokens;
      return plan;
    },
    levels: () => levels ?? { ceiling: undefined, floor: undefined },
    due: (layer, state) => fixed.due(layer, state),
    startBackground: (state) => fixed.startBackground?.(state) ?? false,
  };
}

/**
 * The rounds the collapse layer would fold in a batch with no target: every foldable round but the last
 * `protectRounds` and the recent ones within `protectTokens`; and what a fold rewrites after them.
 */
function stalePart(
  messages: readonly Message[],
  options: {
    protectRounds: number;
    protectTokens: number;
    /** Which rounds may be folded and which outputs cleared. */
    changeable: ChangeableMessages;
    tokensOf: (message: Message) => number;
  },
): StalePart {
  const rounds: number[] = [];
  for (let index = 0; index + 1 < messages.length; index++) {
    if (messages[index]!.role !== "assistant") continue;
    if (options.changeable.foldableAt(messages, index)) rounds.push(index);
  }
  let protect = options.protectRounds;
  let kept = 0;
  for (let round = rounds.length - 1; round >= 0 && kept < options.protectTokens; round--) {
    const start = rounds[round]!;
    kept += options.tokensOf(messages[start]!) + options.tokensOf(messages[start + 1]!);
    protect = Math.max(protect, rounds.length - round);
  }
  const stale = rounds.slice(0, Math.max(0, rounds.length - protect));
  if (stale.length === 0) return { tokens: 0, suffix: 0, freed: 0 };
  let tokens = 0;
  for (const start of stale)
    tokens += options.tokensOf(messages[start]!) + options.tokensOf(messages[start + 1]!);
  // The cache keeps entries only at breakpoints: the system prompt and tools, the last settled block, and the
  // end of each earlier request. A fold changes a message after the settled part: all after it is written again.
  let after = 0;
  for (let index = settledMessages(messages, 0, options.changeable); index < messages.length; index++)
    after += options.tokensOf(messages[index]!);
  const records = stale.length * RECORD_TOKENS_PER_CALL;
  return { tokens, suffix: Math.max(0, after - tokens) + records, freed: Math.max(0, tokens - records) };
}
