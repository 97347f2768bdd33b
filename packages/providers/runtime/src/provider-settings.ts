import type { ModelLimits, ModelLimitsEntry } from "@unforget/core";

/**
 * Settings every provider takes, with the same names, meanings and defaults. A provider's own settings
 * extend these with what its transport needs (keys, endpoint, region, project, …).
 */
export interface ProviderRuntimeSettings {
  /** Retries after the first attempt for transient failures (throttling, overload, 5xx, network, timeouts). Default 2. */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled per retry with up to 25% jitter; a wait the server asks for replaces it. Default 500. */
  initialRetryDelayMs?: number;
  /** Upper bound of one computed backoff delay in milliseconds. Default 32 000. */
  maxRetryDelayMs?: number;
  /**
   * Per-attempt timeout in milliseconds: bounds the wait for an answer (for a stream: its first event, then
   * each wait for the next one). A timed-out attempt is a retryable `ProviderRequestError`.
   */
  timeoutMs?: number;
  /** Context window / output limit overrides keyed by model id or canonical family id. */
  modelLimits?: Record<string, Partial<ModelLimitsEntry>>;
  /**
   * Called once per model id that neither core's table nor `modelLimits` knows, with the limits assumed for it;
   * default a process warning. An app passes its own to say it its way (and to name its own setting).
   */
  onUnknownModel?: (model: string, assumed: ModelLimits) => void;
  /** Use the provider's token counting endpoint. Default true; false answers every count with the heuristic. */
  nativeTokenCounting?: boolean;
  /** Where the environment fallbacks are read from. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * Every shared setting's name, as a record so that the compiler keeps it complete. A provider lists its
 * own names the same way; the runtime refuses any other key (see `ProviderDefinition.settingNames`).
 */
const SHARED_SETTINGS: Readonly<Record<keyof ProviderRuntimeSettings, true>> = {
  maxRetries: true,
  initialRetryDelayMs: true,
  maxRetryDelayMs: true,
  timeoutMs: true,
  modelLimits: true,
  onUnknownModel: true,
  nativeTokenCounting: true,
  env: true,
};

/** The names of the settings every provider takes (`ProviderRuntimeSettings`). */
export const SHARED_SETTING_NAMES: readonly string[] = Object.freeze(Object.keys(SHARED_SETTINGS));

/**
 * The names of a provider's own settings, from a record with one key per setting (`{ apiKey: true, … }`),
 * so that `Record<keyof Own, true>` makes the compiler check the list is complete.
 */
export function settingNamesOf<Own extends object>(
  names: Readonly<Record<keyof Own, true>>,
): readonly string[] {
  return Object.freeze(Object.keys(names));
}
