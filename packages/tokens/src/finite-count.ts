/**
 * Largest count any function of this package returns (2^53 − 1). A count that large only says "far past every
 * window"; saturating there keeps every count an exact integer that sums and compares safely, where the
 * unchecked arithmetic gave `Infinity` (or `NaN` once two of them were subtracted).
 */
export const MAX_COUNTED_TOKENS = Number.MAX_SAFE_INTEGER;

/** Rounds an estimate up to a whole count in [0, MAX_COUNTED_TOKENS]. */
export function toCount(value: number): number {
  // NaN cannot arise from the guarded estimators; if it ever did, 0 is the only count it could mean.
  if (!(value > 0)) return 0;
  return value >= MAX_COUNTED_TOKENS ? MAX_COUNTED_TOKENS : Math.ceil(value);
}

/** The sum of two parts of a count, saturating instead of overflowing. */
export function addCounts(a: number, b: number): number {
  return Math.min(MAX_COUNTED_TOKENS, a + b);
}
