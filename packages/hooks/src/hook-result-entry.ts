import { randomUUID } from "node:crypto";
import { type HookResultEntry, TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";

export interface HookResultInit {
  /** Claude Code style event name ("PreCompact", "SessionStart", …). */
  event: string;
  /** Plugin name or hook command. */
  handler: string;
  outcome: HookResultEntry["outcome"];
  output?: string;
  reason?: string;
  exitCode?: number;
  durationMs?: number;
  sessionId?: string;
}

/** Builds the transcript entry for one hook result; fields that are unknown are left out, not set to undefined. */
export function createHookResultEntry(init: HookResultInit): HookResultEntry {
  const entry: HookResultEntry = {
    v: TRANSCRIPT_FORMAT_VERSION,
    id: `hook_${randomUUID()}`,
    timestamp: new Date().toISOString(),
    type: "hook_result",
    event: init.event,
    handler: init.handler,
    outcome: init.outcome,
  };
  if (init.sessionId !== undefined) entry.sessionId = init.sessionId;
  if (init.output !== undefined) entry.output = init.output;
  if (init.reason !== undefined) entry.reason = init.reason;
  if (init.exitCode !== undefined) entry.exitCode = init.exitCode;
  if (init.durationMs !== undefined) entry.durationMs = Math.round(init.durationMs * 1000) / 1000;
  return entry;
}
