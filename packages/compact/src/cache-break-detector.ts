import type { Usage } from "@unforget/core";

/** A drop in cache reads between two calls larger than this share of the previous reads is a cache break … */
export const CACHE_BREAK_MIN_FRACTION = 0.05;
/** … if it is also at least this many tokens. */
export const CACHE_BREAK_MIN_TOKENS = 2_000;

export interface CacheBreak {
  previousCacheRead: number;
  cacheRead: number;
  droppedTokens: number;
}

export interface CacheBreakDetector {
  /** Called with each response's usage; returns the break when the cached prefix was lost unexpectedly. */
  observe(usage: Usage): CacheBreak | undefined;
  /** Called after a compaction or any change that is expected to lose the cache: the next call sets a new baseline. */
  resetBaseline(): void;
}

/**
 * Notices when the provider stops reading the prompt cache (cache reads drop by more than 5 % and 2,000
 * tokens from one call to the next) — the sign that something before the new messages changed. A compaction
 * resets the baseline (its drop is expected), and so does a response that reports deleted cache tokens
 * (cache edits shrink the reads on purpose).
 */
export function createCacheBreakDetector(
  options: { minFraction?: number; minTokens?: number } = {},
): CacheBreakDetector {
  const minFraction = options.minFraction ?? CACHE_BREAK_MIN_FRACTION;
  const minTokens = options.minTokens ?? CACHE_BREAK_MIN_TOKENS;
  let baseline: number | undefined;
  return {
    observe(usage) {
      const cacheRead = usage.cacheReadInputTokens;
      const previous = baseline;
      baseline = cacheRead;
      if (previous === undefined || (usage.cacheDeletedInputTokens ?? 0) > 0) return undefined;
      const dropped = previous - cacheRead;
      if (dropped > minTokens && dropped > previous * minFraction) {
        return { previousCacheRead: previous, cacheRead, droppedTokens: dropped };
      }
      return undefined;
    },
    resetBaseline() {
      baseline = undefined;
    },
  };
}
