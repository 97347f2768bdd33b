import type { HookResultEntry } from "@unforget/transcript";

/** What the guard records about one tap. */
export interface TapNote {
  outcome: HookResultEntry["outcome"];
  output?: string;
  reason?: string;
}

/** What a policy made of one tap's result. */
export interface Settled {
  /** What the tap hands to tapable (undefined: pass the previous value on / no decision). */
  value: unknown;
  /** What to record about it, if anything. */
  note?: TapNote;
  /** A rule the tap broke without throwing (reported; the policy already repaired its result). */
  problem?: string;
}

/** What a policy made of a failed tap: the value to go on with, and what that means, for the report. */
export interface Rejected extends Settled {
  /** Completes "Plugin X threw in hook; …": what happened because of the failure ("the call was denied"). */
  consequence: string;
}

/** How one kind of hook treats a tap's result and a tap's failure. */
export interface TapPolicy {
  /** Skips the tap entirely (a vetoed compaction does not ask later plugins for instructions). */
  skip?(args: readonly unknown[]): boolean;
  /** The arguments the plugin's function receives, when they differ from what tapable passes the guard. */
  pluginArgs?(args: readonly unknown[]): readonly unknown[];
  /** Turns the tap's result into the value for tapable; throws `UnusableTapResult` for a wrong shape. */
  accept(result: unknown, args: readonly unknown[], handler: string): Settled;
  /** Decides what a failed tap means: pass through (observers, transforms) or refuse (gates). */
  reject(message: string, args: readonly unknown[], handler: string): Rejected;
}

/** Thrown by a policy's `accept` when a tap returned something of the wrong shape; never leaves the guard. */
export class UnusableTapResult extends Error {}

/**
 * What a policy's `reject` makes of a failed tap, every kind alike: the failure recorded as an error, the hook
 * going on with `value`, and `consequence` saying what that means.
 */
export function tapFailed(value: unknown, message: string, consequence: string): Rejected {
  return { value, note: { outcome: "error", reason: message }, consequence };
}
