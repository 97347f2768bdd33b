import { ConfigurationError } from "@unforget/core";
import {
  type ContextThresholdOptions,
  getContextThresholds,
  type ModelOrLimits,
} from "./context-thresholds.ts";

/** Context fractions (of the effective window) at which each compaction layer becomes due. */
export interface LayerLevels {
  /** Persist the largest tool results to disk and keep a preview; default 0.6. */
  toolResultBudget: number;
  /** Clear old tool results without a model call; default 0.8. */
  microcompact: number;
  /**
   * Summarise at this fraction when it is lower than the auto-compact threshold. Unset by default, so the
   * policy fires exactly where `getAutoCompactThreshold` says: a gauge and the compaction loop never
   * disagree. A fixed 90 % level is available as `autoCompact: 0.9`.
   */
  autoCompact?: number;
}

export const DEFAULT_LAYER_LEVELS: Readonly<LayerLevels> = Object.freeze({
  toolResultBudget: 0.6,
  microcompact: 0.8,
});

export type CompactionLayer = keyof LayerLevels;

export type GaugeLevel = "ok" | "warning" | "error";

/** Everything a compaction loop or a UI gauge needs to know about one context size. */
export interface ContextState {
  tokens: number;
  effectiveWindow: number;
  /** Size at which auto-compaction fires under this policy. */
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
  /** Layers whose level has been reached, cheapest first. */
  layersDue: CompactionLayer[];
  /** "warning" from `warningThreshold`, "error" at or past the auto-compact threshold. */
  gauge: GaugeLevel;
  /** At or past `blockingLimit`. */
  atBlockingLimit: boolean;
}

export interface ContextPolicy {
  /** Layer levels in force (defaults merged with the caller's). */
  readonly levels: Readonly<LayerLevels>;
  /** Called before each model call with the current context size; pure, never throws after creation. */
  evaluate(tokens: number): ContextState;
}

export interface ContextPolicyOptions extends ContextThresholdOptions {
  levels?: Partial<LayerLevels>;
}

/**
 * The layer policy for one model: the tool-result budget at 60 % and microcompact at 80 % of the effective
 * window, summarising at the auto-compact threshold (or at `levels.autoCompact` when set and lower). Windows
 * and overrides are read once, here: an invalid one throws `ConfigurationError`, a window below
 * `MINIMUM_CONTEXT_WINDOW_TOKENS` throws `ContextWindowTooSmallError` (see `getEffectiveContextWindow`).
 */
export function createContextPolicy(model: ModelOrLimits, options: ContextPolicyOptions = {}): ContextPolicy {
  const levels: LayerLevels = { ...DEFAULT_LAYER_LEVELS, ...options.levels };
  for (const [name, value] of Object.entries(levels)) {
    if (value === undefined) continue;
    if (!(value > 0 && value <= 1)) {
      throw new ConfigurationError(`levels.${name} is ${value}; give a fraction of the window in (0, 1].`, {
        setting: `levels.${name}`,
      });
    }
  }
  const thresholds = getContextThresholds(model, options);
  const { effectiveWindow, blockingLimit } = thresholds;
  const autoCompactThreshold =
    levels.autoCompact === undefined
      ? thresholds.autoCompactThreshold
      : Math.min(thresholds.autoCompactThreshold, Math.floor(effectiveWindow * levels.autoCompact));
  // The warning keeps its distance to whichever threshold the policy fires at.
  const warningThreshold = Math.max(
    0,
    autoCompactThreshold - (thresholds.autoCompactThreshold - thresholds.warningThreshold),
  );
  return {
    levels,
    evaluate(tokens) {
      const layersDue: CompactionLayer[] = [];
      if (tokens >= effectiveWindow * levels.toolResultBudget) layersDue.push("toolResultBudget");
      if (tokens >= effectiveWindow * levels.microcompact) layersDue.push("microcompact");
      if (tokens >= autoCompactThreshold) layersDue.push("autoCompact");
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
        layersDue,
        gauge: tokens >= autoCompactThreshold ? "error" : tokens >= warningThreshold ? "warning" : "ok",
        atBlockingLimit: tokens >= blockingLimit,
      };
    },
  };
}
