import type { CompactTrigger } from "@unforget/transcript";
import { BREAKER_COOL_DOWN_CALLS, BREAKER_THRESHOLD } from "../defaults.ts";
import type { ContextEvents } from "./context-events.ts";

export interface CircuitBreakerOptions {
  /** Consecutive failures that open it; default 3. */
  threshold?: number;
  /** Calls it stays open before the layer is tried once more; default 20. */
  coolDownCalls?: number;
}

export interface CircuitBreaker {
  /** True while the layer may run: closed, or half-open after its cool-down (one trial). */
  readonly closed: boolean;
  readonly consecutiveFailures: number;
  /** Model calls until an open breaker lets the layer try once more (0 while it may run). */
  readonly callsUntilRetry: number;
  /** Called when the layer did its job: closes it and resets the count. */
  success(): void;
  /** Called when the layer failed (threw, or left the context too large); returns true when this opens it. */
  failure(): boolean;
  /** Called once per model call: an open breaker counts down its cool-down. */
  tick(): void;
  /** Closes it (after a compaction by another path changed the conversation it failed on). */
  reset(): void;
}

/**
 * A per-layer breaker: after `threshold` consecutive failures the layer is skipped; after `coolDownCalls`
 * calls it is tried once (half-open): a success closes it, a failure opens it for another cool-down.
 */
export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const threshold = Math.max(1, options.threshold ?? BREAKER_THRESHOLD);
  const coolDown = Math.max(1, options.coolDownCalls ?? BREAKER_COOL_DOWN_CALLS);
  let failures = 0;
  let waiting = 0;
  return {
    get closed() {
      return failures < threshold || waiting === 0;
    },
    get consecutiveFailures() {
      return failures;
    },
    get callsUntilRetry() {
      return failures < threshold ? 0 : waiting;
    },
    success() {
      failures = 0;
      waiting = 0;
    },
    failure() {
      failures++;
      if (failures < threshold) return false;
      waiting = coolDown;
      return true;
    },
    tick() {
      if (waiting > 0) waiting--;
    },
    reset() {
      failures = 0;
      waiting = 0;
    },
  };
}

/** The breakers of a ladder, one per layer name. */
export interface Breakers {
  /** The breaker of a layer (created closed on first use). */
  get(layer: string): CircuitBreaker;
  /** Called when a layer failed: counts it, reports it, and opens the breaker at the threshold. */
  fail(layer: string, trigger: CompactTrigger, error: unknown): void;
  /** Called once per model call: open breakers count down their cool-down. */
  tick(): void;
  /** Closes every breaker but `except` (another path changed the conversation they failed on). */
  resetAll(except?: string): void;
  /** Consecutive failures per layer, for `status()`. */
  failures(): Record<string, number>;
}

export function createBreakers(options: CircuitBreakerOptions, events: ContextEvents): Breakers {
  const breakers = new Map<string, CircuitBreaker>();
  const get = (layer: string) => {
    let found = breakers.get(layer);
    if (!found) {
      found = createCircuitBreaker(options);
      breakers.set(layer, found);
    }
    return found;
  };
  return {
    get,
    fail(layer, trigger, error) {
      const breaker = get(layer);
      const tripped = breaker.failure();
      events.emit({
        type: "layer-failed",
        layer,
        trigger,
        error: error instanceof Error ? error.message : String(error),
        consecutiveFailures: breaker.consecutiveFailures,
      });
      if (tripped) {
        events.emit({
          type: "breaker-open",
          layer,
          consecutiveFailures: breaker.consecutiveFailures,
          retryInCalls: breaker.callsUntilRetry,
        });
      }
    },
    tick() {
      for (const breaker of breakers.values()) breaker.tick();
    },
    resetAll(except) {
      for (const [layer, breaker] of breakers) if (layer !== except) breaker.reset();
    },
    failures() {
      const failures: Record<string, number> = {};
      for (const [layer, breaker] of breakers) {
        if (breaker.consecutiveFailures > 0) failures[layer] = breaker.consecutiveFailures;
      }
      return failures;
    },
  };
}
