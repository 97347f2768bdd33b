import { AbortedError, ProviderRequestError } from "@unforget/core";

/** Default retry count for provider calls when the caller does not say. */
export const DEFAULT_MAX_RETRIES = 2;

/** How a failure should be treated by the retry loop. */
export interface RetryDecision {
  /** True for transient failures (429, 529, 5xx, network errors). */
  retryable: boolean;
  /** The wait the provider asked for (`retry-after`, `retry-after-ms`, RetryInfo), when it said. */
  retryAfterMs?: number;
}

export interface RetryAttemptInfo {
  /** 1 for the first retry, 2 for the second, … */
  attempt: number;
  /** How long the helper waits before the next attempt. */
  delayMs: number;
  /** The error that made the attempt fail. */
  error: unknown;
}

export interface RetryOptions {
  /** Retries after the first attempt (0 disables retries). Defaults to `DEFAULT_MAX_RETRIES`. */
  maxRetries?: number;
  /** Cancels the current wait and any later attempt; the call then rejects with `AbortedError`. */
  signal?: AbortSignal;
  /** First backoff delay; doubled on every retry. Defaults to 500 ms. */
  initialDelayMs?: number;
  /** Upper bound of the computed backoff delay. Defaults to 32 s. */
  maxDelayMs?: number;
  /** Upper bound of a provider-requested wait. Defaults to 60 s. */
  maxRetryAfterMs?: number;
  /** Classifies a failure. Defaults to reading `ProviderRequestError.retryable` / `retryAfterMs`. */
  classify?: (error: unknown) => RetryDecision;
  /** Called before each wait; for logging and metrics. */
  onRetry?: (info: RetryAttemptInfo) => void;
  /** Source of jitter in [0, 1); injectable so tests are deterministic. Defaults to `Math.random`. */
  random?: () => number;
}

/**
 * Runs `operation` and retries it on transient failures with exponential backoff and up to 25% jitter.
 * A provider-requested wait replaces the computed delay. The abort signal is honoured before each
 * attempt and during every wait.
 */
export async function withRetries<T>(
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const maxRetries = Math.max(0, options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const classify = options.classify ?? classifyProviderError;
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(options.signal);
    try {
      return await operation(attempt);
    } catch (error) {
      if (options.signal?.aborted) throw toAbortedError(options.signal, error);
      const decision = classify(error);
      if (attempt >= maxRetries || !decision.retryable) throw error;
      const delayMs = computeRetryDelay(attempt + 1, decision, options);
      options.onRetry?.({ attempt: attempt + 1, delayMs, error });
      await abortableDelay(delayMs, options.signal);
    }
  }
}

/**
 * The wait before retry number `retryNumber` (1-based): the provider's hint capped at `maxRetryAfterMs`,
 * else 500 ms × 2^(n−1) capped at `maxDelayMs`, minus up to 25% jitter.
 */
export function computeRetryDelay(
  retryNumber: number,
  decision: RetryDecision,
  options: Pick<RetryOptions, "initialDelayMs" | "maxDelayMs" | "maxRetryAfterMs" | "random"> = {},
): number {
  if (decision.retryAfterMs !== undefined) {
    return Math.max(0, Math.min(decision.retryAfterMs, options.maxRetryAfterMs ?? 60_000));
  }
  const initialDelayMs = options.initialDelayMs ?? 500;
  const backoff = Math.min(options.maxDelayMs ?? 32_000, initialDelayMs * 2 ** Math.max(0, retryNumber - 1));
  const random = options.random ?? Math.random;
  return Math.round(backoff * (1 - 0.25 * random()));
}

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date) from response headers.
 * Returns undefined when neither is present or parseable.
 */
export function parseRetryAfter(
  headers: Headers | Record<string, string | string[] | undefined> | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const read = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
    const value = key === undefined ? undefined : headers[key];
    return Array.isArray(value) ? value[0] : value;
  };
  const milliseconds = read("retry-after-ms");
  if (milliseconds !== undefined && milliseconds.trim() !== "" && Number.isFinite(Number(milliseconds))) {
    return Math.max(0, Number(milliseconds));
  }
  const value = read("retry-after");
  if (value === undefined || value.trim() === "") return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Resolves after `delayMs`, or rejects with `AbortedError` as soon as the signal aborts. */
export function abortableDelay(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(toAbortedError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(toAbortedError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Throws `AbortedError` when the signal has already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw toAbortedError(signal);
}

function toAbortedError(signal: AbortSignal, cause?: unknown): AbortedError {
  if (cause instanceof AbortedError) return cause;
  return new AbortedError("The request was aborted by its AbortSignal; nothing more will be sent.", {
    cause: cause ?? signal.reason,
  });
}

function classifyProviderError(error: unknown): RetryDecision {
  if (!(error instanceof ProviderRequestError)) return { retryable: false };
  return error.retryAfterMs === undefined
    ? { retryable: error.retryable }
    : { retryable: error.retryable, retryAfterMs: error.retryAfterMs };
}
