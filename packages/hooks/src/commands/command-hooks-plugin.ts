import type { Attachment } from "@unforget/core";
import type { HookResultEntry } from "@unforget/transcript";
import type { AsyncParallelHook, AsyncSeriesWaterfallHook } from "tapable";
import { type DeclaredHookEntry, onDeclaredHooks } from "../bus/bus-registry.ts";
import type { HookPlugin, PluginHooks, TapOnly } from "../bus/hook-plugin.ts";
import { HOOK_EVENT_NAMES, type HookName } from "../hook-event-names.ts";
import {
  PROMPT_BLOCK_ATTACHMENT_KIND,
  type PreCompactResult,
  type PreToolUseDecision,
  type SessionEventBase,
} from "../hook-events.ts";
import type { GateDecision } from "../kinds/gate-hook.ts";
import type { CommandContext } from "../kinds/hook-declaration.ts";
import { type BusSinks, markSelfRecording } from "../kinds/tap-guard.ts";
import type { HookCommandSettings } from "../settings/hook-settings.ts";
import { commandEnvironment } from "./command-environment.ts";
import {
  type CommandPayload,
  declaredEventPayload,
  postCompactPayload,
  postSamplingPayload,
  postToolUsePayload,
  preCompactPayload,
  preToolUsePayload,
  sessionEndPayload,
  sessionStartPayload,
  userPromptSubmitPayload,
} from "./command-payloads.ts";
import { createCommandReporter } from "./command-reporter.ts";
import type { CommandVerdict } from "./command-verdict.ts";
import { type CommandEvent, createEventCommandRunner } from "./run-event-commands.ts";

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

type RunCommands = (
  target: CommandEvent,
  event: SessionEventBase,
  payload: CommandPayload,
) => Promise<CommandVerdict[]>;

/** The text the commands printed, in the order they were configured. */
function contextsOf(verdicts: readonly CommandVerdict[]): CommandContext[] {
  return verdicts.flatMap((verdict) =>
    verdict.context === undefined ? [] : [{ text: verdict.context, command: verdict.command }],
  );
}

/** Command output joins `sessionStart` / `userPromptSubmit` as `hook-context` attachments. */
function appendHookContext(attachments: Attachment[], contexts: readonly CommandContext[]): Attachment[] {
  return [
    ...attachments,
    ...contexts.map((context) => ({ kind: "hook-context", content: context.text, source: context.command })),
  ];
}

/** A blocking UserPromptSubmit command becomes the attachment that blocks the prompt. */
function promptBlockOf(verdicts: readonly CommandVerdict[]): Attachment[] {
  const blocked = verdicts.find((verdict) => verdict.block !== undefined);
  return blocked?.block === undefined
    ? []
    : [{ kind: PROMPT_BLOCK_ATTACHMENT_KIND, content: blocked.block, source: blocked.command }];
}

/** Printed text is appended to the instructions; a blocking command vetoes (for manual / auto only). */
function preCompactResultOf(result: PreCompactResult, verdicts: readonly CommandVerdict[]): PreCompactResult {
  const added = contextsOf(verdicts).map((context) => context.text);
  const instructions = [result.instructions, ...added].filter((part) => part !== "").join("\n\n");
  const blocked = verdicts.find((verdict) => verdict.block !== undefined);
  return blocked?.block !== undefined
    ? { instructions, veto: { reason: blocked.block, by: blocked.command } }
    : { instructions };
}

/** A blocking command denies; otherwise "allow" if one allowed, else no opinion. */
function gateDecisionOf(verdicts: readonly CommandVerdict[]): GateDecision | undefined {
  const denied = verdicts.find((verdict) => verdict.block !== undefined);
  if (denied?.block !== undefined) return { behavior: "deny", reason: denied.block, by: denied.command };
  return verdicts.some((verdict) => verdict.allow === true) ? { behavior: "allow" } : undefined;
}

/** The gate's answer, plus "rewrite" when a command returned `updatedInput` and none denied. */
function toolDecisionOf(verdicts: readonly CommandVerdict[]): PreToolUseDecision | undefined {
  const decision = gateDecisionOf(verdicts);
  if (decision?.behavior === "deny") return decision;
  const rewritten = verdicts.find((verdict) => verdict.updatedInput !== undefined);
  if (rewritten?.updatedInput !== undefined) return { behavior: "rewrite", input: rewritten.updatedInput };
  return decision;
}

function builtIn(hookName: HookName, blockable: boolean): CommandEvent {
  return { eventName: HOOK_EVENT_NAMES[hookName], hookName, blockable };
}

/** What every tap of one applied plugin shares. */
interface CommandTapper {
  /** The plugin (and tap) name. */
  name: string;
  run: RunCommands;
  /** Marks a tap as recording its own results, and learns the bus's sinks when it is registered. */
  selfRecording<F extends object>(fn: F): F;
  /** Whether settings configure commands for an event name. */
  configured(eventName: string): boolean;
}

/** Observer hooks of the bus, with the payload their commands receive. */
const observerPayloads = {
  postCompact: postCompactPayload,
  sessionEnd: sessionEndPayload,
  postToolUse: postToolUsePayload,
  postSampling: postSamplingPayload,
} as const;

/** Attachment transforms of the bus: command output joins them as `hook-context` attachments. */
const attachmentPayloads = {
  sessionStart: sessionStartPayload,
  userPromptSubmit: userPromptSubmitPayload,
} as const;

type ObserverTaps = TapOnly<AsyncParallelHook<[SessionEventBase]>>;
type AttachmentTaps = TapOnly<AsyncSeriesWaterfallHook<[Attachment[], SessionEventBase]>>;

/** Taps the bus's own hooks that settings configure commands for. */
function tapBusHooks(hooks: PluginHooks, { name, run, selfRecording, configured }: CommandTapper): void {
  if (configured("PreCompact")) {
    hooks.preCompact.tapPromise(
      name,
      selfRecording(async (result, event) => {
        // A reactive (emergency) compaction cannot be vetoed: there a block is reported only.
        const target = builtIn("preCompact", event.trigger !== "reactive");
        return preCompactResultOf(result, await run(target, event, preCompactPayload(result, event)));
      }),
    );
  }
  if (configured("PreToolUse")) {
    hooks.preToolUse.tapPromise(
      name,
      selfRecording(async (event) =>
        toolDecisionOf(await run(builtIn("preToolUse", true), event, preToolUsePayload(event))),
      ),
    );
  }
  // Attachment transforms get the output as context; observers run the commands and contribute nothing.
  for (const [hookName, payloadOf] of Object.entries({ ...attachmentPayloads, ...observerPayloads })) {
    // Of these, only a UserPromptSubmit command may block (the prompt), as in Claude Code.
    const target = builtIn(hookName as HookName, hookName === "userPromptSubmit");
    if (!configured(target.eventName)) continue;
    const payload = payloadOf as (event: SessionEventBase) => CommandPayload;
    const hook = hooks[hookName as HookName];
    if (hookName in attachmentPayloads) {
      (hook as AttachmentTaps).tapPromise(
        name,
        selfRecording(async (attachments: Attachment[], event: SessionEventBase) => {
          const verdicts = await run(target, event, payload(event));
          return [...appendHookContext(attachments, contextsOf(verdicts)), ...promptBlockOf(verdicts)];
        }),
      );
    } else {
      (hook as ObserverTaps).tapPromise(
        name,
        selfRecording(async (event: SessionEventBase) => void (await run(target, event, payload(event)))),
      );
    }
  }
}

/** Tap methods of a declared hook, as the plugin uses them (the event is the last argument). */
type DeclaredTaps = { tapPromise(name: string, fn: (...args: unknown[]) => Promise<unknown>): void };

/**
 * Taps a hook another package declared, when settings configure its `eventName`: observers run the commands,
 * gates turn a blocking command into a deny, transforms add the output through the hook's
 * `addCommandContext` (without one, commands only observe).
 */
function tapDeclaredHook(
  entry: DeclaredHookEntry,
  { name, run, selfRecording, configured }: CommandTapper,
): void {
  const { declaration } = entry;
  const eventName = declaration.eventName;
  if (eventName === undefined || !configured(eventName)) return;
  const target: CommandEvent = {
    eventName,
    hookName: declaration.name,
    blockable: declaration.kind === "gate",
  };
  const runFor = (args: unknown[]) => {
    const event = args.at(-1);
    return run(target, event as SessionEventBase, declaredEventPayload(event, declaration.matcherValue));
  };
  const hook = entry.hook as DeclaredTaps;
  switch (declaration.kind) {
    case "observer":
      hook.tapPromise(
        name,
        selfRecording(async (...args: unknown[]) => void (await runFor(args))),
      );
      return;
    case "gate":
      hook.tapPromise(
        name,
        selfRecording(async (...args: unknown[]) => gateDecisionOf(await runFor(args))),
      );
      return;
    case "transform": {
      const add = declaration.addCommandContext;
      hook.tapPromise(
        name,
        selfRecording(async (value: unknown, ...rest: unknown[]) => {
          const contexts = contextsOf(await runFor([value, ...rest]));
          return add === undefined || contexts.length === 0 ? value : add(value, contexts);
        }),
      );
      return;
    }
  }
}

/**
 * A plugin that runs the hook commands of Claude Code style settings on the bus, so existing hook scripts work
 * unchanged; commands can also subscribe to events other packages declare (by their `eventName`). Only
 * events with configured commands are tapped; an empty settings object costs nothing.
 */
export function createCommandHooksPlugin(options: CommandHooksPluginOptions): HookPlugin {
  const name = options.name ?? "command-hooks";
  const runnerOptions = {
    settings: options.settings,
    cwd: options.cwd ?? options.projectDir,
    env: commandEnvironment(options),
    transcriptPath: options.transcriptPath,
    defaultTimeoutSeconds: options.defaultTimeoutSeconds ?? 60,
    killGraceMs: options.killGraceMs ?? 1000,
  };
  const configured = (eventName: string) => (options.settings[eventName]?.length ?? 0) > 0;
  return {
    name,
    apply(hooks) {
      // One apply per bus: the bus's sinks reach this closure when the plugin's taps are registered on it.
      let sinks: BusSinks | undefined;
      const tapper: CommandTapper = {
        name,
        run: createEventCommandRunner(
          runnerOptions,
          createCommandReporter(options.onHookResult, () => sinks),
        ),
        selfRecording: (fn) =>
          markSelfRecording(fn, (busSinks) => {
            sinks = busSinks;
          }),
        configured,
      };
      tapBusHooks(hooks, tapper);
      // Groups are created on first use, often after the plugins were applied: subscribe to those to come too.
      onDeclaredHooks(hooks, (entry) => tapDeclaredHook(entry, tapper));
    },
  };
}
