import type { Usage } from "@unforget/core";

export interface CostWeights {
  /** Weight of uncached input tokens; default 1. */
  input?: number;
  /** Weight of tokens written to the prompt cache; default 1.25 (Anthropic's 5-minute cache write price). */
  cacheCreation?: number;
  /** Weight of tokens read from the prompt cache; default 0.1. */
  cacheRead?: number;
  /** Weight of output tokens relative to input; default 5. */
  output?: number;
}

export const DEFAULT_COST_WEIGHTS: Readonly<Required<CostWeights>> = Object.freeze({
  input: 1,
  cacheCreation: 1.25,
  cacheRead: 0.1,
  output: 5,
});

/**
 * Usage weighted for *cost*, in input-token equivalents: cached prompt tokens count at a reduced weight.
 * This is not window occupancy (use `usageContextTokens` for that: cached tokens fill the window in full).
 */
export function costWeightedTokens(usage: Usage, weights: CostWeights = {}): number {
  const w = { ...DEFAULT_COST_WEIGHTS, ...weights };
  return (
    usage.inputTokens * w.input +
    usage.cacheCreationInputTokens * w.cacheCreation +
    usage.cacheReadInputTokens * w.cacheRead +
    usage.outputTokens * w.output
  );
}
