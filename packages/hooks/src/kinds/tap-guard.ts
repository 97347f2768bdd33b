import type { HookResultEntry } from "@unforget/transcript";
import { describeError } from "../describe-error.ts";
import { HookError } from "../hook-error.ts";
import { createHookResultEntry } from "../hook-result-entry.ts";
import type { Rejected, Settled, TapPolicy } from "./tap-policy.ts";
import { UnusableTapResult } from "./tap-policy.ts";

/** Where a bus reports plugin failures and records hook results; shared by the bus's own and declared hooks. */
export interface TapGuardContext {
  /** Stamped on every recorded hook result. */
  sessionId: string | undefined;
  /** Reports one failure; never throws. */
  reportError(error: HookError): void;
  /** Appends one transcript entry; may throw (the guard reports it). Undefined: nothing is recorded. */
  record: ((entry: HookResultEntry) => void) | undefined;
}

/**
 * The bus a hook belongs to. Filled in when the hook is bound to a bus (at `createSessionHooks`, or when a
 * hook group is first used with a bus); read on every tap and every call, so a hook tapped before it was
 * bound still reports to its bus.
 */
export interface HookBinding {
  /** The bus's sinks; undefined until the hook is bound (failures then become process warnings). */
  context?: TapGuardContext;
}

/** The bus's own sinks, handed to a self-recording tap when it is registered on a bus. */
export interface BusSinks {
  /** Appends one entry through the bus's `onHookResult`; a sink that throws is reported, never rethrown. */
  record(entry: HookResultEntry): void;
  /** Reports through the bus's `onHookError`; never throws. */
  reportError(error: HookError): void;
}

/** One hook as its guard sees it. */
export interface GuardSpec {
  /** The hook's name ("preCompact", "taskSettled"): `HookError.hook`. */
  hook: string;
  /** The event name recorded in `hook_result` entries ("PreCompact", "TaskSettled"). */
  event: string;
  binding: HookBinding;
}

interface RegisteredTap {
  name: string;
  type: "sync" | "async" | "promise";
  // biome-ignore lint/complexity/noBannedTypes: tapable stores taps as untyped functions
  fn: Function;
  stage?: number;
  before?: string;
}

type TapFunction = (...args: unknown[]) => unknown;

/**
 * Tap functions that record their own hook results (the command-hooks plugin records one entry per command);
 * the guard still isolates their errors but does not record a second entry for them. `bind` is called when
 * the tap is registered, with the sinks of the bus it was registered on.
 */
const selfRecordingTaps = new WeakMap<object, ((sinks: BusSinks) => void) | undefined>();

export function markSelfRecording<F extends object>(fn: F, bind?: (sinks: BusSinks) => void): F {
  selfRecordingTaps.set(fn, bind);
  return fn;
}

/** Where failures go when nobody asked for them: a process warning, which never throws into the session. */
export function emitHookWarning(error: HookError): void {
  process.emitWarning(error.message, { code: error.code });
}

/** The sinks of a hook that is not bound to a bus yet: failures become process warnings, nothing is recorded. */
const unboundContext: TapGuardContext = {
  sessionId: undefined,
  reportError: emitHookWarning,
  record: undefined,
};

function contextOf(binding: HookBinding): TapGuardContext {
  return binding.context ?? unboundContext;
}

/** Appends one entry; a sink that throws is reported, never rethrown (a broken audit log is not a veto). */
function recordSafely(context: TapGuardContext, entry: HookResultEntry, hook: string): void {
  if (context.record === undefined) return;
  try {
    context.record(entry);
  } catch (error) {
    context.reportError(
      new HookError(
        `Recording the ${entry.event} result of "${entry.handler}" failed (${describeError(error)}); check the onHookResult sink.`,
        { hook, handler: entry.handler, cause: error },
      ),
    );
  }
}

function toPromiseCall(tap: RegisteredTap): (args: readonly unknown[]) => unknown {
  const fn = tap.fn as TapFunction;
  if (tap.type === "async") {
    return (args) =>
      new Promise((resolve, reject) => {
        fn(...args, (error: unknown, result: unknown) => {
          if (error !== null && error !== undefined && error !== false) reject(error);
          else resolve(result);
        });
      });
  }
  return (args) => fn(...args);
}

function failureReport(spec: GuardSpec, handler: string, failure: unknown, rejected: Rejected): HookError {
  const what =
    failure instanceof UnusableTapResult
      ? `returned an unusable result in ${spec.hook} (${failure.message})`
      : `threw in ${spec.hook} (${describeError(failure)})`;
  return new HookError(`Plugin "${handler}" ${what}; ${rejected.consequence}. Fix or remove the plugin.`, {
    hook: spec.hook,
    handler,
    cause: failure,
  });
}

/**
 * Wraps every tap of one hook so that its result is checked and its failure is contained according to the
 * hook's policy: observers and transforms isolate errors, gates fail closed.
 */
function createTapGuard(spec: GuardSpec, policy: TapPolicy): (tap: RegisteredTap) => RegisteredTap {
  return (tap) => {
    const call = toPromiseCall(tap);
    const handler = tap.name;
    const selfRecording = selfRecordingTaps.has(tap.fn);
    selfRecordingTaps.get(tap.fn)?.({
      record: (entry) => recordSafely(contextOf(spec.binding), entry, spec.hook),
      reportError: (error) => contextOf(spec.binding).reportError(error),
    });
    const guarded = async (...args: unknown[]): Promise<unknown> => {
      if (policy.skip?.(args) === true) return undefined;
      const context = contextOf(spec.binding);
      const started = performance.now();
      let settled: Settled;
      let failure: unknown;
      try {
        settled = policy.accept(await call(policy.pluginArgs?.(args) ?? args), args, handler);
      } catch (error) {
        failure = error;
        const rejected = policy.reject(describeError(error), args, handler);
        context.reportError(failureReport(spec, handler, error, rejected));
        settled = rejected;
      }
      if (failure === undefined && settled.problem !== undefined) {
        context.reportError(
          new HookError(`Plugin "${handler}" in ${spec.hook}: ${settled.problem}.`, {
            hook: spec.hook,
            handler,
          }),
        );
      }
      if (settled.note !== undefined && (!selfRecording || failure !== undefined)) {
        const durationMs = performance.now() - started;
        recordSafely(
          context,
          createHookResultEntry({
            event: spec.event,
            handler,
            ...settled.note,
            durationMs,
            sessionId: context.sessionId,
          }),
          spec.hook,
        );
      }
      return settled.value;
    };
    return { ...tap, type: "promise", fn: guarded };
  };
}

/** A tapable hook as the guard needs it: one that takes a register interceptor. */
interface InterceptableHook {
  intercept(interceptor: { register?: (tap: RegisteredTap) => RegisteredTap }): void;
}

/**
 * Installs the guard on a tapable hook (its register interceptor sees every tap before it is stored) and
 * returns the hook: every kind of hook is a tapable hook built this way, guarded by its kind's policy.
 */
export function guardedHook<H extends InterceptableHook>(hook: H, spec: GuardSpec, policy: TapPolicy): H {
  hook.intercept({ register: createTapGuard(spec, policy) });
  return hook;
}
