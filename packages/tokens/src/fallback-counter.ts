import type { CountTokensRequest, RequestOptions, TokenCount, TokenCounter } from "@unforget/core";
import { estimateRequestTokens } from "./estimate-request-tokens.ts";
import { toCount } from "./finite-count.ts";
import { stringifyForCounting } from "./stringify-for-counting.ts";
import { stripUncountableFields } from "./strip-uncountable-fields.ts";
import type { TokenEstimatorOptions } from "./token-estimator-options.ts";

export const DEFAULT_COUNT_TIMEOUT_MS = 5_000;
export const DEFAULT_COUNT_CACHE_ENTRIES = 64;

/** A counter that only estimates (method "heuristic"); never calls anything, never throws. */
export function createHeuristicCounter(options: TokenEstimatorOptions = {}): TokenCounter {
  return {
    async countTokens(request) {
      return { inputTokens: estimateRequestTokens(request, options), method: "heuristic" };
    },
  };
}

export interface FallbackCounterOptions {
  /** Milliseconds to wait for the native counter before estimating instead; default 5,000. */
  timeoutMs?: number;
  /** Remember native counts of identical requests: `true` (64 entries), a size, or `false` (default). */
  cache?: boolean | number;
  /** Returns false for models the native counter cannot count; those are estimated without calling it. */
  supportsModel?: (model: string) => boolean;
  /** Options of the heuristic fallback (profile, padding, media estimates). */
  estimator?: TokenEstimatorOptions;
  /** Observes every fallback (for logs or metrics); its own errors are swallowed. */
  onFallback?: (reason: string, error: unknown) => void;
}

class CountTimeout {
  readonly milliseconds: number;
  constructor(milliseconds: number) {
    this.milliseconds = milliseconds;
  }
}

function describe(error: unknown): string {
  if (error instanceof CountTimeout) return `native count timed out after ${error.milliseconds} ms`;
  if (error instanceof Error) return `native count failed: ${error.message}`;
  return `native count failed: ${String(error)}`;
}

function isValidCount(value: unknown): value is TokenCount {
  if (typeof value !== "object" || value === null) return false;
  const tokens = (value as { inputTokens?: unknown }).inputTokens;
  return typeof tokens === "number" && Number.isSafeInteger(tokens) && tokens >= 0;
}

/**
 * Wraps a native counter (a provider's counting endpoint) so that counting never fails: on an error, a
 * timeout, an unsupported model, a caller abort or a malformed result it returns the heuristic estimate with
 * `method: "heuristic"` and the `fallbackReason`. Fields counting endpoints reject are stripped first.
 */
export function createFallbackCounter(
  primary: TokenCounter | undefined,
  options: FallbackCounterOptions = {},
): TokenCounter {
  const timeoutMs =
    options.timeoutMs !== undefined && options.timeoutMs > 0 ? options.timeoutMs : DEFAULT_COUNT_TIMEOUT_MS;
  const cacheSize =
    options.cache === true
      ? DEFAULT_COUNT_CACHE_ENTRIES
      : typeof options.cache === "number"
        ? options.cache
        : 0;
  const cache = new Map<string, TokenCount>();

  const heuristic = (request: CountTokensRequest, reason: string, error?: unknown): TokenCount => {
    try {
      options.onFallback?.(reason, error);
    } catch {
      // An observer must not turn a fallback into a failure.
    }
    let inputTokens: number;
    try {
      inputTokens = estimateRequestTokens(request, options.estimator);
    } catch {
      inputTokens = toCount(stringifyForCounting(request).length / 3);
    }
    return { inputTokens, method: "heuristic", fallbackReason: reason };
  };

  const count = async (request: CountTokensRequest, requestOptions?: RequestOptions): Promise<TokenCount> => {
    if (primary === undefined) return heuristic(request, "no native counter configured");
    let supported = true;
    try {
      supported = options.supportsModel?.(request.model) ?? true;
    } catch {
      supported = false;
    }
    if (!supported) return heuristic(request, `native counting does not support model "${request.model}"`);
    if (requestOptions?.signal?.aborted) return heuristic(request, "count aborted by the caller");

    const stripped = stripUncountableFields(request);
    const key = cacheSize > 0 ? stringifyForCounting(stripped) : "";
    const cached = cacheSize > 0 ? cache.get(key) : undefined;
    if (cached !== undefined) {
      // Refresh recency: Map iteration order is insertion order.
      cache.delete(key);
      cache.set(key, cached);
      return { ...cached };
    }

    const controller = new AbortController();
    const signals = requestOptions?.signal ? [controller.signal, requestOptions.signal] : [controller.signal];
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(new CountTimeout(timeoutMs));
        }, timeoutMs);
      });
      const counted = Promise.resolve().then(() =>
        primary.countTokens(stripped, { ...requestOptions, signal: AbortSignal.any(signals) }),
      );
      // A late rejection after the timeout must not surface as an unhandled rejection.
      counted.catch(() => {});
      const result: unknown = await Promise.race([counted, timeout]);
      if (!isValidCount(result)) {
        return heuristic(
          request,
          `native count returned an invalid result (${stringifyForCounting(result).slice(0, 80)})`,
        );
      }
      const count: TokenCount = { inputTokens: result.inputTokens, method: result.method ?? "native" };
      if (result.fallbackReason !== undefined) count.fallbackReason = result.fallbackReason;
      if (cacheSize > 0 && count.method === "native") {
        cache.set(key, count);
        if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
      }
      return { ...count };
    } catch (error) {
      return heuristic(request, describe(error), error);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  };

  return {
    async countTokens(request, requestOptions?: RequestOptions) {
      try {
        return await count(request, requestOptions);
      } catch (error) {
        // A malformed request from an untyped caller (tools that are not definitions, no request at all)
        // breaks stripping or the cache key before the native counter is reached: estimate anyway.
        return heuristic(request, describe(error), error);
      }
    },
  };
}
