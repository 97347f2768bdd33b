import { ConfigurationError, getModelLimits, type ModelLimits } from "@unforget/core";

/** Output reserved for the compaction summary: the p99.99 observed summary (17,387 tokens) plus margin. */
export const SUMMARY_OUTPUT_RESERVE_TOKENS = 20_000;
/** Headroom below the effective window: the context can grow by a whole response between two checks. */
export const AUTO_COMPACT_BUFFER_TOKENS = 13_000;
/** The UI gauge turns to "warning" this many tokens before the auto-compact threshold. */
export const WARNING_BUFFER_TOKENS = 20_000;
/** With auto-compact off, requests are refused this close to the effective window (room for /compact). */
export const BLOCKING_BUFFER_TOKENS = 3_000;

/** Environment variable: an absolute context window (tokens) that replaces a larger model window. */
export const AUTO_COMPACT_WINDOW_ENV = "UNFORGET_AUTO_COMPACT_WINDOW";
/** Environment variable: auto-compact at this percentage (1–100) of the effective window, if earlier. */
export const AUTO_COMPACT_PERCENT_ENV = "UNFORGET_AUTO_COMPACT_PERCENT";

export interface ContextThresholdOptions {
  /** Environment to read overrides from; defaults to `process.env` (read at call time, never at import). */
  env?: Record<string, string | undefined>;
  /** Absolute window cap; takes precedence over `UNFORGET_AUTO_COMPACT_WINDOW`. */
  windowOverride?: number;
  /** Percentage of the effective window; takes precedence over `UNFORGET_AUTO_COMPACT_PERCENT`. */
  autoCompactPercent?: number;
}

type ModelOrLimits = string | Pick<ModelLimits, "contextWindow" | "maxOutputTokens">;

function limitsOf(model: ModelOrLimits): Pick<ModelLimits, "contextWindow" | "maxOutputTokens"> {
  return typeof model === "string" ? getModelLimits(model) : model;
}

function readNumber(
  explicit: number | undefined,
  env: Record<string, string | undefined>,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const raw = explicit ?? env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = typeof raw === "number" ? raw : Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigurationError(
      `${name} is ${JSON.stringify(raw)}, which is not a number between ${min} and ${max}; fix or unset it.`,
      { setting: name },
    );
  }
  return value;
}

function contextWindow(model: ModelOrLimits, options: ContextThresholdOptions): number {
  const env = options.env ?? process.env;
  const window = limitsOf(model).contextWindow;
  const cap = readNumber(options.windowOverride, env, AUTO_COMPACT_WINDOW_ENV, 1, Number.MAX_SAFE_INTEGER);
  return cap === undefined ? window : Math.min(window, cap);
}

/**
 * The window the conversation may fill: context window minus the output reserved for a compaction summary
 * (the model's max output, at most 20,000). `UNFORGET_AUTO_COMPACT_WINDOW` caps the window first.
 * Throws `ConfigurationError` only for an invalid override.
 */
export function getEffectiveContextWindow(
  model: ModelOrLimits,
  options: ContextThresholdOptions = {},
): number {
  const reserve = Math.min(limitsOf(model).maxOutputTokens, SUMMARY_OUTPUT_RESERVE_TOKENS);
  return Math.max(0, contextWindow(model, options) - reserve);
}

/**
 * Context size at which auto-compaction fires: effective window − 13,000. With
 * `UNFORGET_AUTO_COMPACT_PERCENT` (or `autoCompactPercent`) set, that percentage of the effective window
 * when it is lower (overrides only ever make compaction earlier).
 */
export function getAutoCompactThreshold(model: ModelOrLimits, options: ContextThresholdOptions = {}): number {
  const effective = getEffectiveContextWindow(model, options);
  const threshold = Math.max(0, effective - AUTO_COMPACT_BUFFER_TOKENS);
  const env = options.env ?? process.env;
  const percent = readNumber(options.autoCompactPercent, env, AUTO_COMPACT_PERCENT_ENV, 1, 100);
  if (percent === undefined) return threshold;
  return Math.min(threshold, Math.floor((effective * percent) / 100));
}

/** Context fractions (of the effective window) at which each compaction layer becomes due (seed 000). */
export interface LayerLevels {
  /** Persist the largest tool results to disk and keep a preview; default 0.6. */
  toolResultBudget: number;
  /** Clear old tool results without a model call; default 0.8. */
  microcompact: number;
  /**
   * Summarise at this fraction when it is lower than the auto-compact threshold. Unset by default, so the
   * policy fires exactly where `getAutoCompactThreshold` says (effective window − 13,000): a gauge and the
   * compaction loop never disagree. Seed 000's 90 % is available as `autoCompact: 0.9`.
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
  /** Tokens that can still be added before auto-compaction fires (0 when already past it). */
  tokensLeftBeforeCompaction: number;
  /** Share of the effective window in use, 0–100 (may exceed 100). */
  percentUsed: number;
  /** Share of the auto-compact threshold still free, 0–100. */
  percentLeftBeforeCompaction: number;
  /** Layers whose level has been reached, cheapest first. */
  layersDue: CompactionLayer[];
  /** "warning" within 20,000 tokens of the threshold, "error" at or past it. */
  gauge: GaugeLevel;
  /** At or past effective window − 3,000: with auto-compaction off, the request must not be sent. */
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
 * The layer policy of seed 000 for one model: the tool-result budget at 60 % and microcompact at 80 % of the
 * effective window, summarising at the auto-compact threshold (or at `levels.autoCompact` when set and lower). Overrides are read once, here; an invalid one throws `ConfigurationError`.
 */
export function createContextPolicy(model: ModelOrLimits, options: ContextPolicyOptions = {}): ContextPolicy {
  const levels: LayerLevels = { ...DEFAULT_LAYER_LEVELS, ...options.levels };
  for (const [name, value] of Object.entries(levels)) {
    if (value === undefined) continue;
    if (!(value > 0 && value <= 1)) {
      throw new ConfigurationError(
        `Layer level ${name} is ${value}; give a fraction of the window in (0, 1].`,
        {
          setting: `levels.${name}`,
        },
      );
    }
  }
  const effectiveWindow = getEffectiveContextWindow(model, options);
  const autoCompactThreshold =
    levels.autoCompact === undefined
      ? getAutoCompactThreshold(model, options)
      : Math.min(getAutoCompactThreshold(model, options), Math.floor(effectiveWindow * levels.autoCompact));
  const blockingLimit = Math.max(0, effectiveWindow - BLOCKING_BUFFER_TOKENS);
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
        tokensLeftBeforeCompaction,
        percentUsed: effectiveWindow === 0 ? 100 : (tokens / effectiveWindow) * 100,
        percentLeftBeforeCompaction:
          autoCompactThreshold === 0 ? 0 : (tokensLeftBeforeCompaction / autoCompactThreshold) * 100,
        layersDue,
        gauge:
          tokens >= autoCompactThreshold
            ? "error"
            : tokens >= autoCompactThreshold - WARNING_BUFFER_TOKENS
              ? "warning"
              : "ok",
        atBlockingLimit: tokens >= blockingLimit,
      };
    },
  };
}

/** Tokens that can still be added before auto-compaction fires for `model` (0 when already past it). */
export function getTokensLeftBeforeCompaction(
  tokens: number,
  model: ModelOrLimits,
  options: ContextThresholdOptions = {},
): number {
  return Math.max(0, getAutoCompactThreshold(model, options) - tokens);
}
