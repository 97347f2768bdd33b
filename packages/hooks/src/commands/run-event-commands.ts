import type { SessionEventBase } from "../hook-events.ts";
import type { HookCommandSettings } from "../settings/hook-settings.ts";
import type { CommandPayload } from "./command-payloads.ts";
import type { CommandRunReport } from "./command-reporter.ts";
import { type CommandVerdict, readCommandRun } from "./command-verdict.ts";
import { matchingCommands } from "./matching-commands.ts";
import { runHookCommand } from "./run-hook-command.ts";

/** How the commands of every event run (fixed when the plugin is created). */
export interface EventCommandsOptions {
  settings: HookCommandSettings;
  /** Working directory of the commands and the `cwd` field of their input. */
  cwd: string;
  env: Record<string, string | undefined>;
  /** Sent as `transcript_path`; else the event's `transcriptId`. */
  transcriptPath: string | undefined;
  defaultTimeoutSeconds: number;
  killGraceMs: number;
}

/** The event the commands run for. */
export interface CommandEvent {
  /** Settings name ("PreCompact"): selects the commands and is sent as `hook_event_name`. */
  eventName: string;
  /** Name of the hook on the bus, for reports. */
  hookName: string;
  /** Whether a command may block here (exit 2, decision "block", …); elsewhere a block is reported only. */
  blockable: boolean;
}

/**
 * Returns a function that runs the commands matching one event, in parallel on the same JSON input, and
 * hands each finished run to `report`. Resolves to one verdict per command run (none when nothing matched).
 */
export function createEventCommandRunner(
  options: EventCommandsOptions,
  report: (run: CommandRunReport) => void,
): (target: CommandEvent, event: SessionEventBase, payload: CommandPayload) => Promise<CommandVerdict[]> {
  return async (target, event, payload) => {
    const commands = matchingCommands(options.settings, target.eventName, payload.matchValues);
    if (commands.length === 0) return [];
    const input = JSON.stringify({
      session_id: event.sessionId,
      transcript_path: options.transcriptPath ?? event.transcriptId ?? "",
      cwd: options.cwd,
      hook_event_name: target.eventName,
      ...payload.fields,
    });
    return Promise.all(
      commands.map(async (hook) => {
        const timeoutSeconds = hook.timeout ?? options.defaultTimeoutSeconds;
        const run = await runHookCommand({
          command: hook.command,
          input,
          cwd: options.cwd,
          env: options.env,
          timeoutMs: timeoutSeconds * 1000,
          killGraceMs: options.killGraceMs,
        });
        let verdict = readCommandRun(hook.command, run, timeoutSeconds, options);
        if (verdict.block !== undefined && !target.blockable) {
          const { block, ...rest } = verdict;
          verdict = {
            ...rest,
            outcome: "error",
            reason: `it asked to block (${block}), but a ${target.eventName} hook cannot block here`,
            advice:
              'Exit code 2 and "block" decisions block only PreCompact (manual or auto), PreToolUse, UserPromptSubmit and declared gates.',
          };
        }
        report({
          eventName: target.eventName,
          hookName: target.hookName,
          sessionId: event.sessionId,
          verdict,
          run,
        });
        return verdict;
      }),
    );
  };
}
