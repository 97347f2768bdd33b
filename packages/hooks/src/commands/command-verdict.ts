import type { HookResultEntry } from "@unforget/transcript";
import { describeError } from "../describe-error.ts";
import { isRecord } from "../is-record.ts";
import { launchFailure } from "./command-launch-failure.ts";
import type { HookCommandRun } from "./run-hook-command.ts";

/** What one command run means for the event. */
export interface CommandVerdict {
  command: string;
  outcome: HookResultEntry["outcome"];
  /** Text to add as instructions or context. */
  context?: string;
  /** Set when the command asked to block (exit 2, decision "block", continue false, permission deny/ask). */
  block?: string;
  /** Set when the command allowed (permission "allow", decision "approve"). */
  allow?: boolean;
  /** PreToolUse only: the input the command wants the tool to run with. */
  updatedInput?: Record<string, unknown>;
  /** Why: the block reason, the failure, or the command's own reason. */
  reason?: string;
  /** For a failed run: what to change, for the report. */
  advice?: string;
  /** The command asked that its output stay out of the transcript. */
  suppressOutput: boolean;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" ? value : undefined;
}

/** Reads a JSON object a command printed on stdout, the way Claude Code does. */
function readJsonOutput(verdict: CommandVerdict, json: Record<string, unknown>): CommandVerdict {
  verdict.suppressOutput = json.suppressOutput === true;
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  const additionalContext = stringField(specific, "additionalContext");
  if (additionalContext !== undefined && additionalContext.trim() !== "") verdict.context = additionalContext;
  const reason = stringField(json, "reason");
  const permission = stringField(specific, "permissionDecision");
  const permissionReason = stringField(specific, "permissionDecisionReason");
  if (json.continue === false) {
    verdict.block = stringField(json, "stopReason") ?? reason ?? "the hook asked to stop (continue: false)";
  } else if (json.decision === "block") {
    verdict.block = reason ?? "the hook decided to block";
  } else if (permission === "deny" || permission === "ask") {
    // There is no one to ask inside a session: "ask" is treated as a denial (fail closed).
    verdict.block = permissionReason ?? reason ?? `the hook answered "${permission}"`;
  } else if (permission === "allow" || json.decision === "approve") {
    verdict.allow = true;
  }
  if (isRecord(specific.updatedInput)) verdict.updatedInput = specific.updatedInput;
  if (verdict.block !== undefined) {
    verdict.outcome = "blocked";
    verdict.reason = verdict.block;
  } else if (reason !== undefined || permissionReason !== undefined) {
    verdict.reason = permissionReason ?? reason;
  }
  return verdict;
}

/**
 * Reads a finished run the way Claude Code does: exit 2 blocks, other failures are reported only. `launch`
 * (the commands' working directory and environment) tells a missing or non-executable script apart from a
 * script that failed.
 */
export function readCommandRun(
  command: string,
  run: HookCommandRun,
  timeoutSeconds: number,
  launch: { cwd: string; env: Record<string, string | undefined> },
): CommandVerdict {
  const verdict: CommandVerdict = { command, outcome: "success", suppressOutput: false };
  const stderr = run.stderr.trim();
  if (run.timedOut) {
    return {
      ...verdict,
      outcome: "timeout",
      reason: `did not finish within ${timeoutSeconds}s; its process group was killed`,
      advice: 'Make it faster, or raise its "timeout" (in seconds) in the settings file.',
    };
  }
  const failedToLaunch = launchFailure(command, run, launch);
  if (failedToLaunch !== undefined) return { ...verdict, outcome: "error", ...failedToLaunch };
  if (run.exitCode === 2) {
    const reason = stderr === "" ? "the hook exited with code 2" : stderr;
    return { ...verdict, outcome: "blocked", block: reason, reason };
  }
  if (run.exitCode !== 0) {
    const exit = run.exitCode === null ? "killed by a signal" : `exit code ${run.exitCode}`;
    return {
      ...verdict,
      outcome: "error",
      reason: stderr === "" ? exit : `${exit}: ${stderr}`,
      advice: "Fix the script.",
    };
  }
  const stdout = run.stdout.trim();
  if (stdout === "") return verdict;
  if (!stdout.startsWith("{")) return { ...verdict, context: stdout };
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (error) {
    return {
      ...verdict,
      outcome: "error",
      reason: `printed invalid JSON (${describeError(error)}); its output was ignored`,
      advice: "Print one JSON object or plain text.",
    };
  }
  return isRecord(json) ? readJsonOutput(verdict, json) : { ...verdict, context: stdout };
}
