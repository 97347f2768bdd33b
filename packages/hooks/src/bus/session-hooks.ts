import type { Attachment } from "@unforget/core";
import type { HookResultEntry } from "@unforget/transcript";
import type { AsyncParallelHook, AsyncSeriesWaterfallHook } from "tapable";
import type { HookError } from "../hook-error.ts";
import { HOOK_EVENT_NAMES, type HookName } from "../hook-event-names.ts";
import type {
  PostCompactEvent,
  PostSamplingEvent,
  PostToolUseEvent,
  PreCompactEvent,
  PreCompactResult,
  SessionEndEvent,
  SessionStartEvent,
  UserPromptSubmitEvent,
} from "../hook-events.ts";
import { observerHook } from "../kinds/observer-hook.ts";
import { createPreCompactHook } from "../kinds/pre-compact-hook.ts";
import { createPreToolUseHook, type PreToolUseHook } from "../kinds/pre-tool-use-hook.ts";
import {
  emitHookWarning,
  type GuardSpec,
  type HookBinding,
  type TapGuardContext,
} from "../kinds/tap-guard.ts";
import { type TransformWording, transformHook } from "../kinds/transform-hook.ts";
import { registerBus } from "./bus-registry.ts";

/**
 * The per-session hook bus. Fire with `await hooks.name.promise(...)`; plugins tap through `applyPlugins`.
 * Other packages add their own hooks to the same bus with `defineHookGroup`.
 */
export interface SessionHooks {
  /** Before a compaction: each tap receives the instructions so far and returns them amended, or a veto. */
  readonly preCompact: AsyncSeriesWaterfallHook<[PreCompactResult, PreCompactEvent]>;
  /**
   * After any compaction layer ran (carrying the layer; a summary only where there is one); observers run
   * concurrently, a failing one is reported and never stops the others.
   */
  readonly postCompact: AsyncParallelHook<[PostCompactEvent]>;
  /** On startup, resume, clear and after every compaction: each tap returns the attachments with its own added. */
  readonly sessionStart: AsyncSeriesWaterfallHook<[Attachment[], SessionStartEvent]>;
  /** When the session ends; observers. */
  readonly sessionEnd: AsyncParallelHook<[SessionEndEvent]>;
  /** After each model response (session-memory extraction listens here); observers. */
  readonly postSampling: AsyncParallelHook<[PostSamplingEvent]>;
  /**
   * Before a tool runs: every tap runs in order and sees the input as rewritten so far; a deny (or a failing
   * tap) stops the gate and wins, else the last rewrite, else "allow" if any tap allowed, else no opinion.
   */
  readonly preToolUse: PreToolUseHook;
  /** After a tool ran; observers. */
  readonly postToolUse: AsyncParallelHook<[PostToolUseEvent]>;
  /** When the user submits a prompt: each tap returns the attachments with its own context added. */
  readonly userPromptSubmit: AsyncSeriesWaterfallHook<[Attachment[], UserPromptSubmitEvent]>;
}

export interface SessionHooksOptions {
  /** Stamped on every recorded hook result. */
  sessionId?: string;
  /**
   * Called once per plugin failure (a throwing observer, a gate that failed closed, a rejected veto). Defaults
   * to `process.emitWarning`. Never throws into the session: an exception here is swallowed.
   */
  onHookError?: (error: HookError) => void;
  /**
   * Called with a transcript entry for each notable plugin result (a failure, a veto, a denial, context or
   * instructions contributed); append it to the session transcript.
   */
  onHookResult?: (entry: HookResultEntry) => void;
}

function attachmentText(attachments: readonly unknown[]): string {
  return (attachments as Attachment[])
    .map((attachment) =>
      typeof attachment.content === "string"
        ? attachment.content
        : attachment.content
            .map((block) => ("text" in block ? String(block.text) : `[${block.type}]`))
            .join("\n"),
    )
    .join("\n");
}

/** `sessionStart` and `userPromptSubmit` are append-only transforms over attachments. */
const attachmentWording: TransformWording = { items: "attachments", describeAdded: attachmentText };

/**
 * Creates the hook bus of one session. tapable hooks cannot be untapped, so a bus lives exactly as long as
 * its session: create one per session, never share one between sessions.
 */
export function createSessionHooks(options: SessionHooksOptions = {}): SessionHooks {
  const onHookError = options.onHookError ?? emitHookWarning;
  const context: TapGuardContext = {
    sessionId: options.sessionId,
    reportError(error) {
      try {
        onHookError(error);
      } catch {
        // A broken error sink must not turn a contained failure into a fatal one.
      }
    },
    record: options.onHookResult,
  };
  const binding: HookBinding = { context };
  const spec = (hook: HookName): GuardSpec => ({ hook, event: HOOK_EVENT_NAMES[hook], binding });
  const attachments = <Event>(hook: HookName) =>
    transformHook<[Attachment[], Event]>(["attachments", "event"], spec(hook), undefined, attachmentWording);
  const hooks: SessionHooks = Object.freeze({
    preCompact: createPreCompactHook(binding),
    postCompact: observerHook<[PostCompactEvent]>(["event"], spec("postCompact")),
    sessionStart: attachments<SessionStartEvent>("sessionStart"),
    sessionEnd: observerHook<[SessionEndEvent]>(["event"], spec("sessionEnd")),
    postSampling: observerHook<[PostSamplingEvent]>(["event"], spec("postSampling")),
    preToolUse: createPreToolUseHook(binding),
    postToolUse: observerHook<[PostToolUseEvent]>(["event"], spec("postToolUse")),
    userPromptSubmit: attachments<UserPromptSubmitEvent>("userPromptSubmit"),
  });
  registerBus(hooks, context);
  return hooks;
}
