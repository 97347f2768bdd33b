import { AsyncSeriesBailHook } from "tapable";
import { isRecord } from "../is-record.ts";
import {
  type DeclaredHookOptions,
  declaredHook,
  type EventOf,
  type HookArgumentNames,
} from "./hook-declaration.ts";
import { type GuardSpec, guardedHook } from "./tap-guard.ts";
import { type Rejected, type Settled, type TapPolicy, tapFailed, UnusableTapResult } from "./tap-policy.ts";

/** What a gate tap decides, and what a gate resolves to: `undefined` is "no opinion". */
export type GateDecision = { behavior: "allow" } | { behavior: "deny"; reason: string; by?: string };

/** The tapable hook a gate's taps are typed as; the gate keeps its tap methods and its `promise` signature. */
type GateTaps<Args extends unknown[], Decision> = AsyncSeriesBailHook<Args, Decision | undefined>;

/**
 * A gate: taps are registered and ordered as on any tapable hook (`stage`, `before`), but a fire does not
 * stop at the first answer: every tap runs in order until one denies; a deny (or a failing tap) wins;
 * otherwise "allow" if any tap allowed, else `undefined` (no opinion).
 */
export interface GateHook<Args extends unknown[], Decision = GateDecision>
  extends Pick<GateTaps<Args, Decision>, "tap" | "tapAsync" | "tapPromise" | "isUsed"> {
  /** The name the gate was created with. */
  readonly name: string;
  /** The registered taps in run order (as wrapped by the bus). */
  readonly taps: GateTaps<Args, Decision>["taps"];
  /** Runs the gate once; never rejects because of a tap (a failing tap denies). */
  promise(...args: Args): Promise<Decision | undefined>;
}

/** One fire of a gate as its taps drive it: created by `promise`, handed to every guarded tap, read at the end. */
export interface GateRun {
  /** The arguments the caller fired with; never modified. */
  readonly args: readonly unknown[];
  /** Set by a tap that answered "allow"; it does not stop the taps after it. */
  allowed: boolean;
  /** Set by the tap that denied (or failed); the gate stops there. */
  denied?: { reason: string; by: string };
}

/**
 * Reads an "allow" / "deny" / no-opinion answer into the run. Returns undefined for any other behavior, so a
 * gate with more answers (the tool gate's "rewrite") can handle them. The guard returns `true` to stop
 * tapable's bail loop, `undefined` to go on.
 */
export function acceptGateDecision(result: unknown, run: GateRun, handler: string): Settled | undefined {
  if (result === undefined) return { value: undefined };
  if (!isRecord(result)) throw new UnusableTapResult("it returned something other than a decision object");
  if (result.behavior === "allow") {
    run.allowed = true;
    return { value: undefined };
  }
  if (result.behavior !== "deny") return undefined;
  if (typeof result.reason !== "string") throw new UnusableTapResult("its deny decision has no reason");
  run.denied = { reason: result.reason, by: typeof result.by === "string" ? result.by : handler };
  return { value: true, note: { outcome: "blocked", reason: result.reason } };
}

/** Fails closed: a tap that throws or answers nonsense denies, and the gate stops there. */
export function failClosed(
  run: GateRun,
  failure: { handler: string; message: string; denyReason: string; consequence: string },
): Rejected {
  run.denied = { reason: failure.denyReason, by: failure.handler };
  return tapFailed(true, failure.message, failure.consequence);
}

function gatePolicy(name: string): TapPolicy {
  return {
    pluginArgs: (args) => (args[0] as GateRun).args,
    accept(result, args, handler) {
      const settled = acceptGateDecision(result, args[0] as GateRun, handler);
      if (settled === undefined) {
        throw new UnusableTapResult("its decision behavior is not 'allow' or 'deny'");
      }
      return settled;
    },
    reject(message, args, handler) {
      return failClosed(args[0] as GateRun, {
        handler,
        message,
        denyReason: `Plugin "${handler}" failed in the ${name} gate (${message}); the gate denied. Fix or remove the plugin.`,
        consequence: `the ${name} gate denied (a gate that fails denies)`,
      });
    },
  };
}

/**
 * Builds a gate over a tapable series-bail hook on a per-fire run object: the tap guard (installed as its
 * register interceptor) reads the run, writes each tap's answer into it, and stops the series on a deny.
 */
export function seriesGate<Args extends unknown[], Decision, Run extends GateRun>(
  spec: GuardSpec,
  policy: TapPolicy,
  startRun: (args: Args) => Run,
  decide: (run: Run) => Decision | undefined,
): GateHook<Args, Decision> {
  const series = guardedHook(
    new AsyncSeriesBailHook<[Run], true | undefined>(["run"], spec.hook),
    spec,
    policy,
  );
  // The plugin's function is typed for the caller's arguments; the guard turns it into one that takes the run.
  const asTaps = series as unknown as GateTaps<Args, Decision>;
  return Object.freeze({
    name: spec.hook,
    get taps() {
      return series.taps;
    },
    isUsed: () => series.isUsed(),
    tap: (options, fn) => asTaps.tap(options, fn),
    tapAsync: (options, fn) => asTaps.tapAsync(options, fn),
    tapPromise: (options, fn) => asTaps.tapPromise(options, fn),
    async promise(...args: Args) {
      if (series.taps.length === 0) return undefined;
      const run = startRun(args);
      await series.promise(run);
      return decide(run);
    },
  } satisfies GateHook<Args, Decision>);
}

/** The decision of a finished run: deny if a tap denied, else "allow" if one allowed, else no opinion. */
function gateDecision(run: GateRun): GateDecision | undefined {
  if (run.denied !== undefined) return { behavior: "deny", reason: run.denied.reason, by: run.denied.by };
  return run.allowed ? { behavior: "allow" } : undefined;
}

/**
 * Declares a gate for a hook group: each tap returns `undefined` (no opinion), `{ behavior: "allow" }` or
 * `{ behavior: "deny", reason }`; taps run in order until one denies; deny wins; a failing tap denies (fail
 * closed). `promise(...)` resolves to the combined decision.
 */
export function createGateHook<Args extends unknown[]>(
  argNames: HookArgumentNames<Args>,
  name: string,
  options: DeclaredHookOptions<EventOf<Args>> = {},
): GateHook<Args> {
  void argNames; // Taps receive the caller's arguments; the names document them, as on tapable hooks.
  return declaredHook("gate", name, options, (spec) =>
    seriesGate<Args, GateDecision, GateRun>(
      spec,
      gatePolicy(name),
      (args) => ({ args, allowed: false }),
      gateDecision,
    ),
  );
}
