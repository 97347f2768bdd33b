import { isDeepStrictEqual } from "node:util";
import { AsyncSeriesWaterfallHook } from "tapable";
import {
  type CommandContext,
  type DeclaredHookOptions,
  declaredHook,
  type EventOf,
  type HookArgumentNames,
} from "./hook-declaration.ts";
import { type GuardSpec, guardedHook } from "./tap-guard.ts";
import { type Settled, type TapNote, type TapPolicy, tapFailed, UnusableTapResult } from "./tap-policy.ts";

export interface TransformHookOptions<Value, Event> extends DeclaredHookOptions<Event> {
  /**
   * Defines "append-only" for the value: returns what to pass on, given what a tap received and what it
   * returned — `returned` when the tap only added, else `received` with the tap's additions. When the result
   * differs from what the tap returned, the tap is reported. Without it, array values are append-only (items
   * the tap removed or replaced are restored) and other values pass on as returned.
   */
  merge?: (received: Value, returned: Value) => Value;
  /**
   * How the text command hooks print for this event joins the value (e.g. as attachments). Without it,
   * command hooks subscribed to the event only observe: their runs are recorded, their output is not added.
   */
  addCommandContext?: (value: Value, contexts: readonly CommandContext[]) => Value;
}

/** How a transform's guard words and records what taps added (internal: the built-in hooks use attachments). */
export interface TransformWording {
  /** Plural noun for the array's items in reports ("attachments"). */
  items: string;
  /** Text recorded as the `output` of a tap's added items. */
  describeAdded(added: readonly unknown[]): string;
}

const defaultWording: TransformWording = {
  items: "items",
  describeAdded: (added) => JSON.stringify(added),
};

function sameItem(left: unknown, right: unknown): boolean {
  return left === right || isDeepStrictEqual(left, right);
}

/** A tap may add items after the ones it received; removing or replacing them is undone and reported. */
function appendOnlyArray(result: unknown, received: readonly unknown[], wording: TransformWording): Settled {
  if (!Array.isArray(result)) {
    throw new UnusableTapResult(`it returned something other than an array of ${wording.items}`);
  }
  const kept = received.every((item, index) => sameItem(result[index], item));
  if (kept) {
    const added = result.slice(received.length);
    if (added.length === 0) return { value: result };
    return { value: result, note: { outcome: "success", output: wording.describeAdded(added) } };
  }
  // Restore what the caller and earlier taps contributed; keep what this tap brought that is new.
  const added = result.filter((item) => !received.some((earlier) => sameItem(item, earlier)));
  const reason = `removed or replaced ${wording.items} it received (${received.length} received); they were restored`;
  const note: TapNote = { outcome: "error", reason };
  if (added.length > 0) note.output = wording.describeAdded(added);
  return {
    value: [...received, ...added],
    note,
    problem: `it ${reason} and its own were appended after them. Return [...${wording.items}, ...yours]`,
  };
}

function transformPolicy<Value>(
  merge: ((received: Value, returned: Value) => Value) | undefined,
  wording: TransformWording,
): TapPolicy {
  return {
    accept(result, args) {
      if (result === undefined) return { value: undefined };
      const received = args[0] as Value;
      if (merge !== undefined) {
        const merged = merge(received, result as Value);
        if (sameItem(merged, result)) return { value: result };
        const reason = "changed what it received instead of adding to it; the hook's merge restored it";
        return { value: merged, note: { outcome: "error", reason }, problem: `it ${reason}` };
      }
      if (Array.isArray(received)) return appendOnlyArray(result, received, wording);
      return { value: result };
    },
    reject: (message) => tapFailed(undefined, message, "what it received was passed on unchanged"),
  };
}

/** An `AsyncSeriesWaterfallHook` whose taps are guarded as append-only transforms, reporting through `spec`. */
export function transformHook<Args extends [unknown, ...unknown[]]>(
  argNames: HookArgumentNames<Args>,
  spec: GuardSpec,
  merge?: (received: Args[0], returned: Args[0]) => Args[0],
  wording: TransformWording = defaultWording,
): AsyncSeriesWaterfallHook<Args> {
  return guardedHook(
    new AsyncSeriesWaterfallHook<Args>(argNames as never, spec.hook),
    spec,
    transformPolicy(merge, wording),
  );
}

/**
 * Declares a transform hook for a hook group: each tap returns the value amended; a failing tap passes the
 * value on unchanged and is reported; taps may only add (see `TransformHookOptions.merge`).
 */
export function createTransformHook<Args extends [unknown, ...unknown[]]>(
  argNames: HookArgumentNames<Args>,
  name: string,
  options: TransformHookOptions<Args[0], EventOf<Args>> = {},
): AsyncSeriesWaterfallHook<Args> {
  return declaredHook(
    "transform",
    name,
    options,
    (spec) => transformHook<Args>(argNames, spec, options.merge),
    options.addCommandContext,
  );
}
