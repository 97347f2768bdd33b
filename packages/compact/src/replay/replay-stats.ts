import type { LayerReport } from "../manager/context-events.ts";
import type { ReplayCall, ReplayStats } from "./replay-types.ts";

/** What the summariser read and wrote over a whole replay. */
export interface SummaryTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Counts what each layer did and what the summariser read and wrote (an extractive summary counts as one
 * call); returns this call's summaries alone.
 */
export function tally(
  actions: readonly LayerReport[],
  layers: ReplayStats["layers"],
  summaries: SummaryTotals,
): { inputTokens: number; outputTokens: number } {
  const call = { inputTokens: 0, outputTokens: 0 };
  for (const action of actions) {
    const layer = layers[action.layer] ?? { runs: 0, tokensFreed: 0 };
    layers[action.layer] = layer;
    layer.runs++;
    layer.tokensFreed += action.tokensFreed;
    summaries.calls += action.stats.summarizerCalls ?? 0;
    if (action.summarizer !== undefined && action.summarizer !== "session-memory") {
      call.inputTokens += action.stats.summarizerInputTokens ?? 0;
      call.outputTokens += action.stats.summarizerOutputTokens ?? 0;
      if ((action.stats.summarizerCalls ?? 0) === 0) summaries.calls += 1;
    }
  }
  summaries.inputTokens += call.inputTokens;
  summaries.outputTokens += call.outputTokens;
  return call;
}

/** The session's figures from its calls (the costs in input tokens and the error codes are added by the caller). */
export function statsOf(
  calls: readonly ReplayCall[],
  window: number,
  layers: ReplayStats["layers"],
  summaries: SummaryTotals,
): Omit<ReplayStats, "inputCost" | "slidingWindowInputCost" | "errorCodes"> {
  const totalTokens = calls.reduce((sum, call) => sum + call.tokens, 0);
  const cached = calls.reduce((sum, call) => sum + call.prefixTokens, 0);
  // The first call has no previous request to share a prefix with: reuse is measured from the second on.
  const laterTokens = totalTokens - (calls[0]?.tokens ?? 0);
  const sum = (pick: (call: ReplayCall) => number) => calls.reduce((total, call) => total + pick(call), 0);
  return {
    calls: calls.length,
    peakTokens: calls.reduce((peak, call) => Math.max(peak, call.tokens), 0),
    window,
    overflows: calls.filter((call) => call.tokens > window).length,
    layers,
    summarizerCalls: summaries.calls,
    summarizerInputTokens: summaries.inputTokens,
    summarizerOutputTokens: summaries.outputTokens,
    prefixReuse: laterTokens <= 0 ? 1 : cached / laterTokens,
    cacheReadTokens: sum((call) => call.billing.cacheReadTokens),
    cacheWriteTokens: sum((call) => call.billing.cacheWriteTokens),
    uncachedInputTokens: sum((call) => call.billing.uncachedTokens),
    inputCostUsd: sum((call) => call.inputCostUsd + call.summarizerCostUsd),
    slidingWindowInputCostUsd: sum((call) => call.slidingWindowCostUsd),
    clearedThenNeeded: {
      results: sum((call) => call.clearedThenNeeded.results),
      tokens: sum((call) => call.clearedThenNeeded.tokens),
      costUsd: sum((call) => call.clearedThenNeeded.costUsd),
    },
    violations: calls.flatMap((call) =>
      call.violations.map((violation) => `call ${call.index}: ${violation}`),
    ),
  };
}
