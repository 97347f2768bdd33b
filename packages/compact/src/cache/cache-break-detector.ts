import type { Usage } from "@unforget/core";
import { CACHE_BREAK_MIN_FRACTION, CACHE_BREAK_MIN_TOKENS } from "../defaults.ts";

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
 * tokens from one call to the next) — the sign that something before the new messages changed. A layer that
 * edits the context resets the baseline: its drop is expected.
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
      if (previous === undefined) return undefined;
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
