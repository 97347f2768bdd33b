/** Consecutive failures after which a layer stops being tried. */
export const DEFAULT_BREAKER_THRESHOLD = 3;

export interface CircuitBreaker {
  /** True while the layer may run. */
  readonly closed: boolean;
  readonly consecutiveFailures: number;
  /** Called when the layer did its job; resets the count. */
  success(): void;
  /** Called when the layer failed (threw, or left the context too large); returns true when this trips it. */
  failure(): boolean;
  /** Re-arms it (after a successful compaction by another path, or by the user). */
  reset(): void;
}

/** A per-layer breaker: after `threshold` consecutive failures the layer is skipped until a success elsewhere resets it. */
export function createCircuitBreaker(threshold = DEFAULT_BREAKER_THRESHOLD): CircuitBreaker {
  let failures = 0;
  return {
    get closed() {
      return failures < threshold;
    },
    get consecutiveFailures() {
      return failures;
    },
    success() {
      failures = 0;
    },
    failure() {
      failures++;
      return failures === threshold;
    },
    reset() {
      failures = 0;
    },
  };
}
