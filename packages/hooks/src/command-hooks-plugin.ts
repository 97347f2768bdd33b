import type { Attachment, HookResultEntry } from "@unforget/core";
import { HookError } from "./hook-error.ts";
import { HOOK_EVENT_NAMES, type HookEventName, type HookName } from "./hook-event-names.ts";
import type {
  PostCompactEvent,
  PostSamplingEvent,
  PostToolUseEvent,
  PreCompactEvent,
  PreCompactResult,
  PreToolUseDecision,
  PreToolUseEvent,
  SessionEndEvent,
  SessionEventBase,
  TaskSettledEvent,
} from "./hook-events.ts";
import { matchesHookMatcher } from "./hook-matcher.ts";
import type { HookPlugin } from "./hook-plugin.ts";
import { createHookResultEntry } from "./hook-result-entry.ts";
import type { CommandHookDefinition, HookCommandSettings } from "./hook-settings.ts";
import { type HookCommandRun, runHookCommand } from "./run-hook-command.ts";
import { type BusSinks, markSelfRecording } from "./tap-guard.ts";

export interface CommandHooksPluginOptions {
  /** Event name → matcher groups, usually `(await loadHookSettings(...)).hooks`. */
  settings: HookCommandSettings;
  /** Exported to every command as `CLAUDE_PROJECT_DIR` and `UNFORGET_PROJECT_DIR`. */
  projectDir: string;
  /** Working directory of the commands and the `cwd` field of their input. Default: `projectDir`. */
  cwd?: string;
  /** Sent as `transcript_path`; defaults to the event's `transcriptId`. */
  transcriptPath?: string;
  /**
   * Which variables of `process.env` the commands inherit. `true` (default, as in Claude Code): all of them,
   * provider API keys included. `false`: none. A list of names: only those (e.g. `["PATH", "HOME", "LANG"]`).
   * `env` and the project dir variables are added in every case. Read once, when the plugin is created.
   */
  inheritEnv?: boolean | readonly string[];
  /** Extra environment variables, on top of the inherited ones. */
  env?: Record<string, string>;
  /** Timeout for commands that set none, in seconds. Default 60, as in Claude Code. */
  defaultTimeoutSeconds?: number;
  /** Time between SIGTERM and SIGKILL of a timed-out command's process group, in ms. Default 1000. */
  killGraceMs?: number;
  /**
   * Called with one transcript entry per command run; append it to the session transcript. Default: the
   * `onHookResult` of the bus the plugin is applied to. A sink that throws is reported, never a veto or denial.
   */
  onHookResult?: (entry: HookResultEntry) => void;
  /** Plugin (and tap) name. Default "command-hooks". */
  name?: string;
}

/** What one command run means for the event. */
interface CommandVerdict {
  command: string;
  outcome: HookResultEntry["outcome"];
  /** Text to add as instructions or context. */
  context?: string;
  /** Set when the command asked to block (exit 2, decision "block", continue false, permission deny/ask). */
  block?: string;
  allow?: boolean;
  updatedInput?: Record<string, unknown>;
  reason?: string;
  suppressOutput: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" ? value : undefined;
}

/** Reads a finished run the way Claude Code does: exit 2 blocks, other failures are reported only. */
export function interpretCommandRun(
  command: string,
  run: HookCommandRun,
  timeoutSeconds: number,
): CommandVerdict {
  const verdict: CommandVerdict = { command, outcome: "success", suppressOutput: false };
  const stderr = run.stderr.trim();
  if (run.spawnError !== undefined) {
    return { ...verdict, outcome: "error", reason: `could not be started (${run.spawnError.message})` };
  }
  if (run.timedOut) {
    return {
      ...verdict,
      outcome: "timeout",
      reason: `did not finish within ${timeoutSeconds}s; its process group was killed`,
    };
  }
  if (run.exitCode === 2) {
    const reason = stderr === "" ? "the hook exited with code 2" : stderr;
    return { ...verdict, outcome: "blocked", block: reason, reason };
  }
  if (run.exitCode !== 0) {
    const reason = stderr === "" ? `exited with code ${run.exitCode ?? "null (killed)"}` : stderr;
    return { ...verdict, outcome: "error", reason };
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
      reason: `printed invalid JSON (${(error as Error).message}); its output was ignored. Print one JSON object or plain text.`,
    };
  }
  if (!isRecord(json)) return { ...verdict, context: stdout };
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

const HOOK_NAMES_BY_EVENT = new Map<string, HookName>(
  (Object.entries(HOOK_EVENT_NAMES) as [HookName, HookEventName][]).map(([hook, event]) => [event, hook]),
);

/** Where one bus's command results and failures go; filled in when the plugin's taps are registered. */
interface BusReporting {
  sinks?: BusSinks;
}

/** Claude Code knows only "manual" and "auto"; an emergency compaction is automatic. */
function claudeTrigger(trigger: PreCompactEvent["trigger"]): "manual" | "auto" {
  return trigger === "manual" ? "manual" : "auto";
}

/** The part of `process.env` the commands inherit, per the `inheritEnv` option. */
function inheritedEnvironment(inherit: boolean | readonly string[]): NodeJS.ProcessEnv {
  if (inherit === true) return { ...process.env };
  const environment: NodeJS.ProcessEnv = {};
  if (inherit === false) return environment;
  for (const name of inherit) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  return environment;
}

/**
 * A plugin that runs the hook commands of Claude Code style settings on the bus, so existing hook scripts work
 * unchanged. Only events with configured commands are tapped; an empty settings object costs nothing.
 */
export function createCommandHooksPlugin(options: CommandHooksPluginOptions): HookPlugin {
  const name = options.name ?? "command-hooks";
  const cwd = options.cwd ?? options.projectDir;
  const env: NodeJS.ProcessEnv = {
    ...inheritedEnvironment(options.inheritEnv ?? true),
    ...options.env,
    CLAUDE_PROJECT_DIR: options.projectDir,
    UNFORGET_PROJECT_DIR: options.projectDir,
  };
  const defaultTimeout = options.defaultTimeoutSeconds ?? 60;

  const matching = (eventName: HookEventName, values: string[] | undefined): CommandHookDefinition[] => {
    const seen = new Set<string>();
    const commands: CommandHookDefinition[] = [];
    for (const group of options.settings[eventName] ?? []) {
      const matched =
        values === undefined || values.some((value) => matchesHookMatcher(group.matcher, value));
      if (!matched) continue;
      for (const hook of group.hooks) {
        // Identical commands configured in several files run once, as in Claude Code.
        if (seen.has(hook.command)) continue;
        seen.add(hook.command);
        commands.push(hook);
      }
    }
    return commands;
  };

  const runAll = async (
    eventName: HookEventName,
    event: SessionEventBase,
    fields: Record<string, unknown>,
    commands: CommandHookDefinition[],
    blockable: boolean,
    reporting: BusReporting,
  ): Promise<CommandVerdict[]> => {
    const hookName = HOOK_NAMES_BY_EVENT.get(eventName) ?? eventName;
    const reportError = (error: HookError) => reporting.sinks?.reportError(error);
    const input = JSON.stringify({
      session_id: event.sessionId,
      transcript_path: options.transcriptPath ?? event.transcriptId ?? "",
      cwd,
      hook_event_name: eventName,
      ...fields,
    });
    return Promise.all(
      commands.map(async (hook) => {
        const timeoutSeconds = hook.timeout ?? defaultTimeout;
        const run = await runHookCommand({
          command: hook.command,
          input,
          cwd,
          env,
          timeoutMs: timeoutSeconds * 1000,
          killGraceMs: options.killGraceMs ?? 1000,
        });
        let verdict = interpretCommandRun(hook.command, run, timeoutSeconds);
        if (verdict.block !== undefined && !blockable) {
          const { block, ...rest } = verdict;
          verdict = {
            ...rest,
            outcome: "error",
            reason: `${block} (a ${eventName} hook cannot block here; nothing was blocked)`,
          };
        }
        if (verdict.outcome === "error" || verdict.outcome === "timeout") {
          reportError(
            new HookError(
              `Hook command "${hook.command}" failed on ${eventName}: ${verdict.reason ?? verdict.outcome}. The session goes on; fix the script (or raise its timeout).`,
              { hook: hookName, handler: hook.command },
            ),
          );
        }
        const entry = createHookResultEntry({
          event: eventName,
          handler: hook.command,
          outcome: verdict.outcome,
          output: verdict.suppressOutput ? undefined : verdict.context,
          reason: verdict.reason,
          exitCode: run.exitCode ?? undefined,
          durationMs: run.durationMs,
          sessionId: event.sessionId,
        });
        if (options.onHookResult === undefined) {
          reporting.sinks?.record(entry);
        } else {
          try {
            options.onHookResult(entry);
          } catch (error) {
            // A broken audit sink must not turn into a veto or a denial: gates fail closed on a throw.
            reportError(
              new HookError(
                `Recording the ${eventName} result of "${hook.command}" failed (${error instanceof Error ? error.message : String(error)}); check the command-hooks onHookResult sink.`,
                { hook: hookName, handler: hook.command, cause: error },
              ),
            );
          }
        }
        return verdict;
      }),
    );
  };

  const contextAttachments = (verdicts: CommandVerdict[]): Attachment[] =>
    verdicts.flatMap((verdict) =>
      verdict.context === undefined
        ? []
        : [{ kind: "hook-context", content: verdict.context, source: verdict.command }],
    );

  return {
    name,
    apply(hooks) {
      // One apply per bus: the bus's sinks reach this closure when the taps below are registered on it.
      const reporting: BusReporting = {};
      const bind = (sinks: BusSinks) => {
        reporting.sinks = sinks;
      };
      const has = (eventName: HookEventName) => (options.settings[eventName]?.length ?? 0) > 0;

      if (has("PreCompact")) {
        hooks.preCompact.tapPromise(
          name,
          markSelfRecording(async (result: PreCompactResult, event: PreCompactEvent) => {
            const commands = matching("PreCompact", [claudeTrigger(event.trigger), event.trigger]);
            if (commands.length === 0) return result;
            const verdicts = await runAll(
              "PreCompact",
              event,
              {
                trigger: claudeTrigger(event.trigger),
                // What Claude Code sends: the user's own instructions, not what earlier plugins appended.
                custom_instructions: result.userInstructions ?? result.instructions,
                unforget_instructions: result.instructions,
                unforget_trigger: event.trigger,
                tokens: event.tokens,
                threshold: event.threshold,
              },
              commands,
              event.trigger !== "reactive",
              reporting,
            );
            const added = verdicts.flatMap((verdict) =>
              verdict.context === undefined ? [] : [verdict.context],
            );
            const instructions = [result.instructions, ...added].filter((part) => part !== "").join("\n\n");
            const blocked = verdicts.find((verdict) => verdict.block !== undefined);
            return blocked?.block !== undefined
              ? { instructions, veto: { reason: blocked.block, by: blocked.command } }
              : { instructions };
          }, bind),
        );
      }

      if (has("SessionStart")) {
        hooks.sessionStart.tapPromise(
          name,
          markSelfRecording(async (attachments, event) => {
            const commands = matching("SessionStart", [event.source]);
            if (commands.length === 0) return attachments;
            const verdicts = await runAll(
              "SessionStart",
              event,
              { source: event.source },
              commands,
              false,
              reporting,
            );
            return [...attachments, ...contextAttachments(verdicts)];
          }, bind),
        );
      }

      if (has("UserPromptSubmit")) {
        hooks.userPromptSubmit.tapPromise(
          name,
          markSelfRecording(async (attachments, event) => {
            const commands = matching("UserPromptSubmit", undefined);
            if (commands.length === 0) return attachments;
            const verdicts = await runAll(
              "UserPromptSubmit",
              event,
              { prompt: event.prompt },
              commands,
              false,
              reporting,
            );
            return [...attachments, ...contextAttachments(verdicts)];
          }, bind),
        );
      }

      if (has("PreToolUse")) {
        hooks.preToolUse.tapPromise(
          name,
          markSelfRecording(async (event: PreToolUseEvent): Promise<PreToolUseDecision | undefined> => {
            const commands = matching("PreToolUse", [event.toolName]);
            if (commands.length === 0) return undefined;
            const verdicts = await runAll(
              "PreToolUse",
              event,
              { tool_name: event.toolName, tool_input: event.input, tool_use_id: event.toolUseId },
              commands,
              true,
              reporting,
            );
            const denied = verdicts.find((verdict) => verdict.block !== undefined);
            if (denied?.block !== undefined)
              return { behavior: "deny", reason: denied.block, by: denied.command };
            const rewritten = verdicts.find((verdict) => verdict.updatedInput !== undefined);
            if (rewritten?.updatedInput !== undefined)
              return { behavior: "rewrite", input: rewritten.updatedInput };
            return verdicts.some((verdict) => verdict.allow === true) ? { behavior: "allow" } : undefined;
          }, bind),
        );
      }

      // Observers: run the matching commands, record them, contribute nothing.
      const observe = <E extends SessionEventBase>(
        tapPromise: (tapName: string, fn: (event: E) => Promise<void>) => void,
        eventName: HookEventName,
        describeEvent: (event: E) => { values: string[] | undefined; fields: Record<string, unknown> },
      ): void => {
        if (!has(eventName)) return;
        tapPromise(
          name,
          markSelfRecording(async (event: E) => {
            const { values, fields } = describeEvent(event);
            const commands = matching(eventName, values);
            if (commands.length > 0) await runAll(eventName, event, fields, commands, false, reporting);
          }, bind),
        );
      };
      observe(
        (tapName, fn) => hooks.postCompact.tapPromise(tapName, fn),
        "PostCompact",
        (event: PostCompactEvent) => ({
          values: [claudeTrigger(event.trigger), event.trigger],
          fields: {
            trigger: claudeTrigger(event.trigger),
            unforget_trigger: event.trigger,
            compact_summary: event.summary,
            tokens_before: event.tokensBefore,
            tokens_after: event.tokensAfter,
            messages_summarized: event.messagesSummarized,
          },
        }),
      );
      observe(
        (tapName, fn) => hooks.sessionEnd.tapPromise(tapName, fn),
        "SessionEnd",
        (event: SessionEndEvent) => ({ values: [event.reason], fields: { reason: event.reason } }),
      );
      observe(
        (tapName, fn) => hooks.postToolUse.tapPromise(tapName, fn),
        "PostToolUse",
        (event: PostToolUseEvent) => ({
          values: [event.toolName],
          fields: {
            tool_name: event.toolName,
            tool_input: event.input,
            tool_use_id: event.toolUseId,
            tool_response: { output: event.output, is_error: event.isError },
          },
        }),
      );
      observe(
        (tapName, fn) => hooks.postSampling.tapPromise(tapName, fn),
        "PostSampling",
        (event: PostSamplingEvent) => ({
          values: undefined,
          fields: {
            message_id: event.messageId,
            context_tokens: event.contextTokens,
            tool_calls: event.toolCalls,
          },
        }),
      );
      observe(
        (tapName, fn) => hooks.taskSettled.tapPromise(tapName, fn),
        "TaskSettled",
        (event: TaskSettledEvent) => ({
          values: undefined,
          fields: { task_id: event.taskId, status: event.status, output_path: event.outputPath },
        }),
      );
    },
  };
}
