import { AsyncSeriesBailHook } from "tapable";
import type { PreToolUseDecision, PreToolUseEvent } from "./hook-events.ts";
import { type PreToolUseRun, preToolUseDecision } from "./tap-guard.ts";

/** The tapable hook this gate's taps are typed as; the gate keeps its tap methods and its `promise` signature. */
type PreToolUseTaps = AsyncSeriesBailHook<[PreToolUseEvent], PreToolUseDecision | undefined>;

/**
 * The `preToolUse` gate. Taps are registered and ordered as on any tapable hook (`stage`, `before`), but a
 * fire does not stop at the first answer: every tap runs in order and sees the input as rewritten so far; a
 * deny (or a failing tap) stops it and wins; otherwise the result is the last rewrite, else "allow" if any
 * tap allowed, else `undefined` (no opinion).
 */
export interface PreToolUseHook extends Pick<PreToolUseTaps, "tap" | "tapAsync" | "tapPromise" | "isUsed"> {
  /** "preToolUse". */
  readonly name: string;
  /** The registered taps in run order (as wrapped by the bus). */
  readonly taps: PreToolUseTaps["taps"];
  /** Runs the gate for one tool call; never rejects because of a tap (a failing tap denies). */
  promise(event: PreToolUseEvent): Promise<PreToolUseDecision | undefined>;
}

type RegisteredTap = PreToolUseTaps["taps"][number];

/**
 * Creates the gate. Taps are stored and ordered by a tapable series-bail hook over a per-call run; `register`
 * wraps each tap so that it reads the run's current input and writes its decision into the run (the bus's
 * tap guard), and only a deny stops the series.
 */
export function createPreToolUseHook(register: (tap: RegisteredTap) => RegisteredTap): PreToolUseHook {
  const series = new AsyncSeriesBailHook<[PreToolUseRun], true | undefined>(["run"], "preToolUse");
  series.intercept({ register });
  // The plugin's function is typed for the event; `register` turns it into one that takes the run.
  const asSeries = series as unknown as PreToolUseTaps;
  return Object.freeze({
    name: "preToolUse",
    get taps() {
      return series.taps;
    },
    isUsed: () => series.isUsed(),
    tap: (options, fn) => asSeries.tap(options, fn),
    tapAsync: (options, fn) => asSeries.tapAsync(options, fn),
    tapPromise: (options, fn) => asSeries.tapPromise(options, fn),
    async promise(event) {
      if (series.taps.length === 0) return undefined;
      const run: PreToolUseRun = { event, input: event.input, rewritten: false, allowed: false };
      await series.promise(run);
      return preToolUseDecision(run);
    },
  } satisfies PreToolUseHook);
}
