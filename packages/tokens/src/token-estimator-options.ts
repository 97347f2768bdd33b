import { knownProfile } from "./estimate-text-tokens.ts";
import type { EstimatorProfile } from "./estimator-coefficients.ts";

/** Flat estimate for an image or document whose size is unknown: 2,000 tokens, as Claude Code's estimator (a typical screenshot is 1,000–1,600 tokens by Anthropic's image-size formula, so this errs high). */
export const DEFAULT_MEDIA_TOKENS = 2_000;
/** Role markers and block framing the provider adds around each message. */
export const DEFAULT_MESSAGE_OVERHEAD_TOKENS = 3;
/** Pre-flight padding: estimates are multiplied by 4/3 so a request is not sent on an under-estimate. */
export const DEFAULT_PADDING = 4 / 3;

export interface TokenEstimatorOptions {
  /** Which fitted tokenizer family to imitate; default "claude" (the public Claude tokenizer). */
  profile?: EstimatorProfile;
  /** Tokens for an image without known dimensions; default 2,000. */
  imageTokens?: number;
  /** Tokens for a document without text or page count; default 2,000. */
  documentTokens?: number;
  /** Tokens per page of a document whose `pages` is known; default 2,000. */
  documentPageTokens?: number;
  /** Tokens added per message for role and framing; default 3. */
  messageOverheadTokens?: number;
  /** Most thinking tokens counted per message (thinking is estimated separately); default unlimited. */
  thinkingBudgetTokens?: number;
  /** Multiplier applied by the pre-flight functions (`estimateRequestTokens`, anchored counts); default 4/3. */
  padding?: number;
}

export interface ResolvedTokenEstimatorOptions {
  profile: EstimatorProfile;
  imageTokens: number;
  documentTokens: number;
  documentPageTokens: number;
  messageOverheadTokens: number;
  thinkingBudgetTokens: number;
  padding: number;
}

function nonNegative(value: number | undefined, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/**
 * Fills defaults; invalid numbers (negative, NaN, infinite) and unknown profiles fall back to the default rather
 * than throwing: counting runs on every turn and must not stop a session. Huge finite numbers are kept; the
 * counts they produce saturate at `MAX_COUNTED_TOKENS`.
 */
export function resolveTokenEstimatorOptions(
  options: TokenEstimatorOptions = {},
): ResolvedTokenEstimatorOptions {
  if (typeof options !== "object" || options === null) options = {};
  return {
    profile: knownProfile(options.profile),
    imageTokens: nonNegative(options.imageTokens, DEFAULT_MEDIA_TOKENS),
    documentTokens: nonNegative(options.documentTokens, DEFAULT_MEDIA_TOKENS),
    documentPageTokens: nonNegative(options.documentPageTokens, DEFAULT_MEDIA_TOKENS),
    messageOverheadTokens: nonNegative(options.messageOverheadTokens, DEFAULT_MESSAGE_OVERHEAD_TOKENS),
    thinkingBudgetTokens:
      typeof options.thinkingBudgetTokens === "number" && options.thinkingBudgetTokens >= 0
        ? options.thinkingBudgetTokens
        : Number.POSITIVE_INFINITY,
    padding:
      typeof options.padding === "number" && Number.isFinite(options.padding) && options.padding > 0
        ? options.padding
        : DEFAULT_PADDING,
  };
}
