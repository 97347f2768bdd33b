import type { PreToolUseDecision, PreToolUseEvent } from "../hook-events.ts";
import { isRecord } from "../is-record.ts";
import { acceptGateDecision, failClosed, type GateHook, type GateRun, seriesGate } from "./gate-hook.ts";
import type { HookBinding } from "./tap-guard.ts";
import { type TapPolicy, UnusableTapResult } from "./tap-policy.ts";

/**
 * The `preToolUse` gate. Taps are registered and ordered as on any tapable hook (`stage`, `before`), but a
 * fire does not stop at the first answer: every tap runs in order and sees the input as rewritten so far; a
 * deny (or a failing tap) stops it and wins; otherwise the result is the last rewrite, else "allow" if any
 * tap allowed, else `undefined` (no opinion).
 */
export interface PreToolUseHook extends GateHook<[PreToolUseEvent], PreToolUseDecision> {}

/** One `preToolUse` call as the gate drives it: a gate run that also carries the input as rewritten so far. */
interface PreToolUseRun extends GateRun {
  /** The event the app fired; never modified. */
  readonly event: PreToolUseEvent;
  /** The input later taps see: the event's, or the last rewrite's. */
  input: Record<string, unknown>;
  /** Set by the first tap that rewrote the input. */
  rewritten: boolean;
}

/** The event a `preToolUse` tap sees: the app's, with the input of the last rewrite. */
function currentToolEvent(run: PreToolUseRun): PreToolUseEvent {
  return run.rewritten ? { ...run.event, input: run.input } : run.event;
}

/** The gate's policy plus "rewrite": a rewrite replaces the input the later taps see and does not stop them. */
const preToolUsePolicy: TapPolicy = {
  pluginArgs: (args) => [currentToolEvent(args[0] as PreToolUseRun)],
  accept(result, args, handler) {
    const run = args[0] as PreToolUseRun;
    const settled = acceptGateDecision(result, run, handler);
    if (settled !== undefined) return settled;
    const decision = result as { behavior?: unknown; input?: unknown };
    if (decision.behavior !== "rewrite") {
      throw new UnusableTapResult("its decision behavior is not 'allow', 'deny' or 'rewrite'");
    }
    if (!isRecord(decision.input)) throw new UnusableTapResult("its rewrite decision has no input object");
    run.input = decision.input;
    run.rewritten = true;
    return {
      value: undefined,
      note: { outcome: "success", output: JSON.stringify(decision.input), reason: "rewrote the tool input" },
    };
  },
  reject(message, args, handler) {
    const run = args[0] as PreToolUseRun;
    return failClosed(run, {
      handler,
      message,
      denyReason: `Plugin "${handler}" failed while checking the ${run.event.toolName} call (${message}); the call was denied. Fix or remove the plugin.`,
      consequence: `the ${run.event.toolName} call was denied (a tool gate that fails denies)`,
    });
  },
};

/** The decision of a finished run: deny if any tap denied, else rewrite if any rewrote, else allow / none. */
function preToolUseDecision(run: PreToolUseRun): PreToolUseDecision | undefined {
  if (run.denied !== undefined) return { behavior: "deny", reason: run.denied.reason, by: run.denied.by };
  if (run.rewritten) return { behavior: "rewrite", input: run.input };
  return run.allowed ? { behavior: "allow" } : undefined;
}

/** Creates the bus's tool gate, reporting through `binding`. */
export function createPreToolUseHook(binding: HookBinding): PreToolUseHook {
  return seriesGate<[PreToolUseEvent], PreToolUseDecision, PreToolUseRun>(
    { hook: "preToolUse", event: "PreToolUse", binding },
    preToolUsePolicy,
    ([event]) => ({ args: [event], event, input: event.input, rewritten: false, allowed: false }),
    preToolUseDecision,
  );
}
