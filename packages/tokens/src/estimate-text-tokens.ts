import { ESTIMATOR_COEFFICIENTS, type EstimatorProfile } from "./estimator-coefficients.ts";
import { toCount } from "./finite-count.ts";
import { stringifyForCounting } from "./stringify-for-counting.ts";
import { collectTextFeatures, TEXT_FEATURE_COUNT } from "./text-features.ts";

/** The tokenizer family whose counts the estimator imitates by default (the public Claude tokenizer fit). */
export const DEFAULT_ESTIMATOR_PROFILE: EstimatorProfile = "claude";

// Reused by every call: the hot loop allocates nothing.
const scratch = new Float64Array(TEXT_FEATURE_COUNT);

/**
 * Unrounded token estimate of a text under a profile's fitted coefficients. Internal building block: callers
 * that add up many parts sum these and round once.
 */
export function estimateTextTokensExact(
  text: string,
  profile: EstimatorProfile = DEFAULT_ESTIMATOR_PROFILE,
): number {
  if (text.length === 0) return 0;
  scratch.fill(0);
  collectTextFeatures(text, scratch);
  const coefficients = ESTIMATOR_COEFFICIENTS[profile];
  let total = 0;
  for (let index = 0; index < TEXT_FEATURE_COUNT; index++) total += scratch[index]! * coefficients[index]!;
  return total;
}

/**
 * Estimated token count of a text: a linear model over character classes (ASCII words, letters, case changes,
 * digits, punctuation, whitespace runs, newlines, accented Latin, CJK, other scripts, astral symbols) fitted
 * against real BPE tokenizers. Unpadded best guess, at least 1 for non-empty text; linear in the text length and
 * allocation-free. A value that is not a string (from an untyped caller) is counted as its JSON text; an
 * unknown profile counts as the default one. Never throws.
 */
export function estimateTextTokens(
  text: string,
  profile: EstimatorProfile = DEFAULT_ESTIMATOR_PROFILE,
): number {
  const value = typeof text === "string" ? text : stringifyForCounting(text);
  if (value.length === 0) return 0;
  // Some fitted weights are 0 (a lone space or tab under "claude"): any non-empty text is at least one token.
  return Math.max(1, toCount(estimateTextTokensExact(value, knownProfile(profile))));
}

/** The profile itself when it has coefficients, else the default (untyped callers pass anything). */
export function knownProfile(profile: unknown): EstimatorProfile {
  return typeof profile === "string" && Object.hasOwn(ESTIMATOR_COEFFICIENTS, profile)
    ? (profile as EstimatorProfile)
    : DEFAULT_ESTIMATOR_PROFILE;
}
