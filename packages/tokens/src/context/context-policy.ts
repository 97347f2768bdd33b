import {
  type ContextThresholdOptions,
  getContextThresholds,
  type ModelOrLimits,
} from "./context-thresholds.ts";

export type GaugeLevel = "ok" | "warning" | "error";

/** Everything a compaction loop or a UI gauge needs to know about one context size. */
export interface ContextState {
  tokens: number;
  effectiveWindow: number;
  /** Size at which auto-compaction fires. */
  autoCompactThreshold: number;
  /** Size from which the gauge shows "warning". */
  warningThreshold: number;
  /** Size at or past which, with auto-compaction off, the request must not be sent. */
  blockingLimit: number;
  /** Tokens that can still be added before auto-compaction fires (0 when already past it). */
  tokensLeftBeforeCompaction: number;
  /** Share of the effective window in use, 0–100 (may exceed 100). */
  percentUsed: number;
  /** Share of the auto-compact threshold still free, 0–100. */
  percentLeftBeforeCompaction: number;
  /** "warning" from `warningThreshold`, "error" at or past the auto-compact threshold. */
  gauge: GaugeLevel;
  /** At or past `blockingLimit`. */
  atBlockingLimit: boolean;
}

export interface ContextPolicy {
  /** Called before each model call (or each redraw of a gauge) with the context size; pure, never throws after creation. */
  evaluate(tokens: number): ContextState;
}

export type ContextPolicyOptions = ContextThresholdOptions;

/**
 * One model's thresholds applied to a context size: the gauge, tokens left, the blocking limit. Which
 * compaction layer runs when is the compaction package's business (its policy and layers); this gives the
 * sizes they are measured against, and always agrees with `getAutoCompactThreshold`. Windows and overrides are
 * read once, here: an invalid one throws `ConfigurationError`, a window below `MINIMUM_CONTEXT_WINDOW_TOKENS`
 * throws `ContextWindowTooSmallError` (see `getEffectiveContextWindow`).
 */
export function createContextPolicy(model: ModelOrLimits, options: ContextPolicyOptions = {}): ContextPolicy {
  const { effectiveWindow, blockingLimit, autoCompactThreshold, warningThreshold } = getContextThresholds(
    model,
    options,
  );
  return {
    evaluate(tokens) {
      const tokensLeftBeforeCompaction = Math.max(0, autoCompactThreshold - tokens);
      return {
        tokens,
        effectiveWindow,
        autoCompactThreshold,
        warningThreshold,
        blockingLimit,
        tokensLeftBeforeCompaction,
        percentUsed: (tokens / effectiveWindow) * 100,
        percentLeftBeforeCompaction: (tokensLeftBeforeCompaction / autoCompactThreshold) * 100,
        gauge: tokens >= autoCompactThreshold ? "error" : tokens >= warningThreshold ? "warning" : "ok",
        atBlockingLimit: tokens >= blockingLimit,
      };
    },
  };
}
