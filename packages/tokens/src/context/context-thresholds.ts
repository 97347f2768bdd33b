import { ConfigurationError, getModelLimits, type ModelLimits } from "@unforget/core";
import { ContextWindowTooSmallError } from "./context-window-too-small-error.ts";

// Each reserve and buffer is a share of the context window, with a floor and a cap. The caps are the values
// tuned for 200K windows, and each share is chosen so that it reaches its cap at 200K at the latest: every
// window of 200K and above gets exactly the fixed numbers. docs/decisions/0009 gives the reasons.

/** Output reserved for the compaction summary (cap): the p99.99 observed summary (17,387 tokens) plus margin. */
export const SUMMARY_OUTPUT_RESERVE_TOKENS = 20_000;
/** Headroom below the effective window (cap): the context can grow by a whole response between two checks. */
export const AUTO_COMPACT_BUFFER_TOKENS = 13_000;
/** The UI gauge turns to "warning" this many tokens before the auto-compact threshold (cap). */
export const WARNING_BUFFER_TOKENS = 20_000;
/** With auto-compact off, requests are refused this close to the effective window (cap; room for /compact). */
export const BLOCKING_BUFFER_TOKENS = 3_000;
/**
 * Smallest context window accepted: 3 × the 2,000-token summary floor + the 2,000-token headroom floor. Below
 * it the threshold would hold less than twice a summary, so compaction would fire again a turn or two after
 * each compaction.
 */
export const MINIMUM_CONTEXT_WINDOW_TOKENS = 8_000;

const SUMMARY_RESERVE = { cap: SUMMARY_OUTPUT_RESERVE_TOKENS, floor: 2_000, numerator: 1, denominator: 8 };
const AUTO_COMPACT_BUFFER = { cap: AUTO_COMPACT_BUFFER_TOKENS, floor: 2_000, numerator: 1, denominator: 8 };
const WARNING_BUFFER = { cap: WARNING_BUFFER_TOKENS, floor: 1_000, numerator: 1, denominator: 10 };
const BLOCKING_BUFFER = { cap: BLOCKING_BUFFER_TOKENS, floor: 1_000, numerator: 3, denominator: 200 };

/** Environment variable: an absolute context window (tokens) that replaces a larger model window. */
export const AUTO_COMPACT_WINDOW_ENV = "UNFORGET_AUTO_COMPACT_WINDOW";
/** Environment variable: auto-compact at this percentage (1–100) of the effective window, if earlier. */
export const AUTO_COMPACT_PERCENT_ENV = "UNFORGET_AUTO_COMPACT_PERCENT";

/** Where auto-compaction fires: a percentage of the effective window, or a number of tokens. */
export type AutoCompactThresholdSetting = { percent: number } | { tokens: number };

export interface ContextThresholdOptions {
  /** Environment to read overrides from; defaults to `process.env` (read at call time, never at import). */
  env?: Record<string, string | undefined>;
  /** Absolute window cap; takes precedence over `UNFORGET_AUTO_COMPACT_WINDOW`. */
  windowOverride?: number;
  /** Percentage of the effective window; takes precedence over `UNFORGET_AUTO_COMPACT_PERCENT`. */
  autoCompactPercent?: number;
  /**
   * The model's auto-compact threshold, replacing the computed one (earlier or later, below the blocking
   * limit). `UNFORGET_AUTO_COMPACT_PERCENT` / `autoCompactPercent` can still make it earlier.
   */
  autoCompactThreshold?: AutoCompactThresholdSetting;
}

/** Every level of one model's window, in tokens, strictly increasing from `warningThreshold` to `contextWindow`. */
export interface ContextThresholds {
  /** The model's window, capped by `windowOverride` / `UNFORGET_AUTO_COMPACT_WINDOW`. */
  contextWindow: number;
  /** Output kept free for the compaction summary: min(max output, the scaled reserve). */
  summaryOutputReserve: number;
  /** The window the conversation may fill: `contextWindow − summaryOutputReserve`. */
  effectiveWindow: number;
  /** Headroom between the computed threshold and the effective window. */
  autoCompactBuffer: number;
  /** Context size at which auto-compaction fires, after every override. */
  autoCompactThreshold: number;
  /** Context size from which a gauge shows "warning". */
  warningThreshold: number;
  /** With auto-compaction off, a request at or past this size must not be sent. */
  blockingLimit: number;
}

/** A model id (looked up in core's model limits) or the limits themselves. */
export type ModelOrLimits = string | Pick<ModelLimits, "contextWindow" | "maxOutputTokens">;

interface Scale {
  cap: number;
  floor: number;
  numerator: number;
  denominator: number;
}

function scaled(window: number, scale: Scale): number {
  return Math.min(
    scale.cap,
    Math.max(scale.floor, Math.floor((window * scale.numerator) / scale.denominator)),
  );
}

const formatTokens = (value: number) => value.toLocaleString("en-US");

function describeValue(value: unknown): string {
  return typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
}

function limitOf(limits: Record<string, unknown>, field: "contextWindow" | "maxOutputTokens"): number {
  const value = limits[field];
  if (typeof value !== "number" || !(value >= 1) || !Number.isFinite(value)) {
    throw new ConfigurationError(
      `${field} is ${describeValue(value)}, which is not a positive number of tokens; give the model's real limit.`,
      { setting: field },
    );
  }
  return Math.floor(value);
}

/**
 * An override from an option (named in errors as the option) or else from the environment (named as the
 * variable). Undefined when neither is set.
 */
function readOverride(
  option: string,
  explicit: unknown,
  variable: string,
  env: Record<string, string | undefined>,
  min: number,
  max: number,
  what: string,
): { value: number; source: string } | undefined {
  const fromOption = explicit !== undefined;
  const raw = fromOption ? explicit : env[variable];
  if (raw === undefined || (!fromOption && String(raw).trim() === "")) return undefined;
  const value = typeof raw === "number" ? raw : fromOption ? Number.NaN : Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    const source = fromOption ? option : variable;
    throw new ConfigurationError(
      `${source} is ${fromOption ? describeValue(raw) : JSON.stringify(raw)}, which is not ${what}; fix or ${fromOption ? "remove" : "unset"} it.`,
      { setting: source },
    );
  }
  return { value, source: fromOption ? option : variable };
}

interface ResolvedWindow {
  contextWindow: number;
  summaryOutputReserve: number;
  effectiveWindow: number;
}

function resolveWindow(model: ModelOrLimits, options: ContextThresholdOptions): ResolvedWindow {
  const limits = (typeof model === "string" ? getModelLimits(model) : model) as unknown;
  if (typeof limits !== "object" || limits === null) {
    throw new ConfigurationError(
      `The model is ${describeValue(limits)}; give a model id or { contextWindow, maxOutputTokens }.`,
      { setting: "model" },
    );
  }
  const modelWindow = limitOf(limits as Record<string, unknown>, "contextWindow");
  const maxOutputTokens = limitOf(limits as Record<string, unknown>, "maxOutputTokens");
  const cap = readOverride(
    "windowOverride",
    options.windowOverride,
    AUTO_COMPACT_WINDOW_ENV,
    options.env ?? process.env,
    1,
    Number.MAX_SAFE_INTEGER,
    "a positive number of tokens",
  );
  const capped = cap !== undefined && cap.value < modelWindow;
  const contextWindow = capped ? Math.floor(cap.value) : modelWindow;
  if (contextWindow < MINIMUM_CONTEXT_WINDOW_TOKENS)
    throw tooSmall(model, contextWindow, capped ? cap : undefined);
  const summaryOutputReserve = Math.min(maxOutputTokens, scaled(contextWindow, SUMMARY_RESERVE));
  return { contextWindow, summaryOutputReserve, effectiveWindow: contextWindow - summaryOutputReserve };
}

function tooSmall(
  model: ModelOrLimits,
  contextWindow: number,
  override: { value: number; source: string } | undefined,
): ContextWindowTooSmallError {
  const minimum = formatTokens(MINIMUM_CONTEXT_WINDOW_TOKENS);
  const why =
    "automatic compaction needs room for a summary (at least 2,000 tokens), 2,000 tokens of headroom, and twice " +
    "the summary for the conversation, or it compacts every turn";
  const message =
    override !== undefined
      ? `${override.source} is ${override.value}, below the ${minimum}-token minimum window: ${why}. Raise it, or ` +
        `compact earlier with ${override.source === AUTO_COMPACT_WINDOW_ENV ? AUTO_COMPACT_PERCENT_ENV : "autoCompactThreshold"} instead.`
      : `${typeof model === "string" ? `The context window of "${model}"` : "contextWindow"} is ` +
        `${formatTokens(contextWindow)} tokens, below the ${minimum}-token minimum: ${why}. Give the model a ` +
        "larger context (llama.cpp -c, Ollama num_ctx) and register its real window.";
  return new ContextWindowTooSmallError(message, {
    setting: override?.source ?? "contextWindow",
    contextWindow,
    minimumContextWindow: MINIMUM_CONTEXT_WINDOW_TOKENS,
  });
}

function chosenThreshold(
  setting: unknown,
  window: ResolvedWindow,
  blockingLimit: number,
): number | undefined {
  if (setting === undefined) return undefined;
  const shown = describeValue(setting);
  const record = (typeof setting === "object" && setting !== null ? setting : {}) as Record<string, unknown>;
  const { percent, tokens } = record;
  if ((percent === undefined) === (tokens === undefined)) {
    throw new ConfigurationError(
      `autoCompactThreshold is ${shown}; give either { percent } (of the effective window) or { tokens }.`,
      { setting: "autoCompactThreshold" },
    );
  }
  const value = percent ?? tokens;
  const limit = percent !== undefined ? 100 : Number.MAX_SAFE_INTEGER;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > limit) {
    throw new ConfigurationError(
      `autoCompactThreshold is ${shown}, which is not ${percent !== undefined ? "a percentage in (0, 100]" : "a positive number of tokens"}; fix or remove it.`,
      { setting: "autoCompactThreshold" },
    );
  }
  const threshold = Math.floor(percent !== undefined ? (window.effectiveWindow * value) / 100 : value);
  if (threshold < 1 || threshold >= blockingLimit) {
    const most = Math.floor(((blockingLimit - 1) / window.effectiveWindow) * 100);
    throw new ConfigurationError(
      `autoCompactThreshold is ${shown}, which is ${formatTokens(threshold)} tokens: it must be at least 1 and ` +
        `below the blocking limit of ${formatTokens(blockingLimit)} (the effective window ` +
        `${formatTokens(window.effectiveWindow)} minus room for a manual compaction). Give fewer tokens or at ` +
        `most ${most} percent.`,
      { setting: "autoCompactThreshold" },
    );
  }
  return threshold;
}

/**
 * Every threshold of one model: the summary reserve, effective window, auto-compact threshold, warning level
 * and blocking limit, scaled with the window (windows of 200K and above get the fixed numbers). Throws
 * `ContextWindowTooSmallError` below `MINIMUM_CONTEXT_WINDOW_TOKENS` and `ConfigurationError` for an invalid
 * option or environment override, naming the option or the variable that held it.
 */
export function getContextThresholds(
  model: ModelOrLimits,
  options: ContextThresholdOptions = {},
): ContextThresholds {
  const window = resolveWindow(model, options);
  const { contextWindow, effectiveWindow } = window;
  // Scaled on the effective window (as an eighth of the window it stands for), so that the threshold
  // never drops by a token when the window grows by one: both terms rounding up at once did that.
  const autoCompactBuffer = scaled(Math.floor((effectiveWindow * 8) / 7), AUTO_COMPACT_BUFFER);
  const blockingLimit = effectiveWindow - scaled(contextWindow, BLOCKING_BUFFER);
  let autoCompactThreshold =
    chosenThreshold(options.autoCompactThreshold, window, blockingLimit) ??
    effectiveWindow - autoCompactBuffer;
  const percent = readOverride(
    "autoCompactPercent",
    options.autoCompactPercent,
    AUTO_COMPACT_PERCENT_ENV,
    options.env ?? process.env,
    1,
    100,
    "a number between 1 and 100",
  );
  if (percent !== undefined) {
    // Overrides from the environment only ever make compaction earlier.
    autoCompactThreshold = Math.min(
      autoCompactThreshold,
      Math.floor((effectiveWindow * percent.value) / 100),
    );
  }
  return {
    ...window,
    autoCompactBuffer,
    autoCompactThreshold,
    warningThreshold: Math.max(0, autoCompactThreshold - scaled(contextWindow, WARNING_BUFFER)),
    blockingLimit,
  };
}

/**
 * The window the conversation may fill: context window minus the output reserved for a compaction summary
 * (the model's max output, at most an eighth of the window between 2,000 and 20,000 tokens).
 * `UNFORGET_AUTO_COMPACT_WINDOW` / `windowOverride` cap the window first. Throws `ContextWindowTooSmallError`
 * below `MINIMUM_CONTEXT_WINDOW_TOKENS` and `ConfigurationError` for an invalid override.
 */
export function getEffectiveContextWindow(
  model: ModelOrLimits,
  options: ContextThresholdOptions = {},
): number {
  return resolveWindow(model, options).effectiveWindow;
}

/**
 * Context size at which auto-compaction fires: effective window − the auto-compact buffer (an eighth of the
 * window between 2,000 and 13,000 tokens), or `autoCompactThreshold` when set. With
 * `UNFORGET_AUTO_COMPACT_PERCENT` (or `autoCompactPercent`) set, that percentage of the effective window when
 * it is lower (those overrides only ever make compaction earlier).
 */
export function getAutoCompactThreshold(model: ModelOrLimits, options: ContextThresholdOptions = {}): number {
  return getContextThresholds(model, options).autoCompactThreshold;
}

/** Tokens that can still be added before auto-compaction fires for `model` (0 when already past it). */
export function getTokensLeftBeforeCompaction(
  tokens: number,
  model: ModelOrLimits,
  options: ContextThresholdOptions = {},
): number {
  return Math.max(0, getAutoCompactThreshold(model, options) - tokens);
}
