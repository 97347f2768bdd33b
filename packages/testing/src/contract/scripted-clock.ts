import { setImmediate as nextTurn } from "node:timers/promises";
import { vi } from "vitest";

/**
 * A clock that moves only when the scenario says so. Timers (`setTimeout` / `clearTimeout`, which the
 * provider runtime's per-attempt timeouts and retry waits use) are scripted; promises, sockets and
 * `setImmediate` stay real, so requests still travel to the fake while the clock stands still.
 */
export interface ScriptedClock {
  /** Moves the clock `ms` forward, firing every timer that falls due on the way (and what they start). */
  advance(ms: number): Promise<void>;
  /**
   * Lets real work (I/O, promises) run without moving the clock until `condition` holds. `what` names the
   * condition in the error thrown if it never does (after `UNTIL_LIMIT_MS` of real time: a guard against a
   * hang, far longer than any local round trip, never a measurement).
   */
  until(condition: () => boolean, what: string): Promise<void>;
}

/** Real time `until` waits before it gives up (less than the suites' 30 s test timeout, so its message shows). */
const UNTIL_LIMIT_MS = 20_000;

/**
 * Runs `scenario` on a scripted clock and restores the real timers afterwards, whatever happens. Timing
 * scenarios written this way cannot fail because the machine is slow: a timeout fires when the scenario
 * advances past it, never because a request took long.
 */
export async function withScriptedClock<T>(scenario: (clock: ScriptedClock) => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  const clock: ScriptedClock = {
    async advance(ms) {
      await vi.advanceTimersByTimeAsync(ms);
    },
    async until(condition, what) {
      const giveUpAt = performance.now() + UNTIL_LIMIT_MS;
      while (!condition()) {
        if (performance.now() > giveUpAt) {
          throw new Error(
            `The scenario waited ${UNTIL_LIMIT_MS / 1000} s of real time for ${what}; it never came.`,
          );
        }
        await nextTurn();
      }
    },
  };
  try {
    return await scenario(clock);
  } finally {
    vi.useRealTimers();
  }
}
