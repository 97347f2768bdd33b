import type { HookResultEntry } from "@unforget/transcript";
import { describeError } from "../describe-error.ts";
import { HookError } from "../hook-error.ts";
import { createHookResultEntry } from "../hook-result-entry.ts";
import type { BusSinks } from "../kinds/tap-guard.ts";
import type { CommandVerdict } from "./command-verdict.ts";
import type { HookCommandRun } from "./run-hook-command.ts";

/** One finished command run, as the reporter receives it. */
export interface CommandRunReport {
  /** Settings name of the event ("PreCompact", "TaskSettled"). */
  eventName: string;
  /** Name of the hook on the bus ("preCompact", "taskSettled"): `HookError.hook`. */
  hookName: string;
  sessionId: string;
  verdict: CommandVerdict;
  run: HookCommandRun;
}

/**
 * Reports and records command runs: a failed or timed-out run goes to the bus's `onHookError`, every run
 * becomes a `hook_result` entry for the plugin's own sink, or else the bus's `onHookResult`. `busSinks`
 * returns the sinks of the bus the plugin was applied to (known once its taps are registered).
 */
export function createCommandReporter(
  pluginSink: ((entry: HookResultEntry) => void) | undefined,
  busSinks: () => BusSinks | undefined,
): (report: CommandRunReport) => void {
  const reportError = (error: HookError) => busSinks()?.reportError(error);
  return ({ eventName, hookName, sessionId, verdict, run }) => {
    if (verdict.outcome === "error" || verdict.outcome === "timeout") {
      const what = verdict.outcome === "timeout" ? "timed out" : "failed";
      // A failed run never blocks; it may still have printed context (e.g. a block on an event that cannot block).
      const consequence =
        verdict.context === undefined
          ? "It added nothing and blocked nothing."
          : "Its output was added; it blocked nothing.";
      reportError(
        new HookError(
          `Hook command "${verdict.command}" ${what} on ${eventName}: ${verdict.reason ?? verdict.outcome}. ${consequence} ${verdict.advice ?? "Fix the script."}`,
          { hook: hookName, handler: verdict.command },
        ),
      );
    }
    const entry = createHookResultEntry({
      event: eventName,
      handler: verdict.command,
      outcome: verdict.outcome,
      output: verdict.suppressOutput ? undefined : verdict.context,
      reason: verdict.reason,
      exitCode: run.exitCode ?? undefined,
      durationMs: run.durationMs,
      sessionId,
    });
    if (pluginSink === undefined) {
      busSinks()?.record(entry);
      return;
    }
    try {
      pluginSink(entry);
    } catch (error) {
      // A broken audit sink must not turn into a veto or a denial: gates fail closed on a throw.
      reportError(
        new HookError(
          `Recording the ${eventName} result of "${verdict.command}" failed (${describeError(error)}); check the command-hooks onHookResult sink.`,
          { hook: hookName, handler: verdict.command, cause: error },
        ),
      );
    }
  };
}
