import { AsyncParallelHook } from "tapable";
import {
  type DeclaredHookOptions,
  declaredHook,
  type EventOf,
  type HookArgumentNames,
} from "./hook-declaration.ts";
import { type GuardSpec, guardedHook } from "./tap-guard.ts";
import { type TapPolicy, tapFailed } from "./tap-policy.ts";

/** Observers contribute nothing; a failing one is recorded and reported, and the others still run. */
const observerPolicy: TapPolicy = {
  accept: () => ({ value: undefined }),
  reject: (message) => tapFailed(undefined, message, "the other observers still ran and the session goes on"),
};

/** An `AsyncParallelHook` whose taps are guarded as observers, reporting through `spec`. */
export function observerHook<Args extends unknown[]>(
  argNames: HookArgumentNames<Args>,
  spec: GuardSpec,
): AsyncParallelHook<Args> {
  return guardedHook(new AsyncParallelHook<Args>(argNames as never, spec.hook), spec, observerPolicy);
}

/**
 * Declares an observer hook for a hook group: taps run concurrently; a failing tap is reported (`onHookError`
 * and a `hook_result` entry) and never stops the other taps or the caller.
 */
export function createObserverHook<Args extends unknown[]>(
  argNames: HookArgumentNames<Args>,
  name: string,
  options: DeclaredHookOptions<EventOf<Args>> = {},
): AsyncParallelHook<Args> {
  return declaredHook("observer", name, options, (spec) => observerHook<Args>(argNames, spec));
}
