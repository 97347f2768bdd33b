import type { Attachment, HookResultEntry } from "@unforget/core";
import { AsyncParallelHook, AsyncSeriesWaterfallHook } from "tapable";
import type { HookError } from "./hook-error.ts";
import type { HookName } from "./hook-event-names.ts";
import type {
  PostCompactEvent,
  PostSamplingEvent,
  PostToolUseEvent,
  PreCompactEvent,
  PreCompactResult,
  SessionEndEvent,
  SessionStartEvent,
  TaskSettledEvent,
  UserPromptSubmitEvent,
} from "./hook-events.ts";
import { createPreToolUseHook, type PreToolUseHook } from "./pre-tool-use-hook.ts";
import { createTapGuard, type TapGuardContext } from "./tap-guard.ts";

/** The per-session hook bus. Fire with `await hooks.name.promise(...)`; plugins tap through `applyPlugins`. */
export interface SessionHooks {
  /** Before a compaction: each tap receives the instructions so far and returns them amended, or a veto. */
  readonly preCompact: AsyncSeriesWaterfallHook<[PreCompactResult, PreCompactEvent]>;
  /** After a compaction; observers run concurrently, a failing one is reported and never stops the others. */
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
  /** When a background task completes, fails or is killed; observers. */
  readonly taskSettled: AsyncParallelHook<[TaskSettledEvent]>;
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

function defaultOnHookError(error: HookError): void {
  process.emitWarning(error.message, { code: error.code });
}

/**
 * Creates the hook bus of one session. tapable hooks cannot be untapped, so a bus lives exactly as long as
 * its session: create one per session, never share one between sessions.
 */
export function createSessionHooks(options: SessionHooksOptions = {}): SessionHooks {
  const onHookError = options.onHookError ?? defaultOnHookError;
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
  const hooks: SessionHooks = {
    preCompact: new AsyncSeriesWaterfallHook<[PreCompactResult, PreCompactEvent]>(
      ["result", "event"],
      "preCompact",
    ),
    postCompact: new AsyncParallelHook<[PostCompactEvent]>(["event"], "postCompact"),
    sessionStart: new AsyncSeriesWaterfallHook<[Attachment[], SessionStartEvent]>(
      ["attachments", "event"],
      "sessionStart",
    ),
    sessionEnd: new AsyncParallelHook<[SessionEndEvent]>(["event"], "sessionEnd"),
    postSampling: new AsyncParallelHook<[PostSamplingEvent]>(["event"], "postSampling"),
    // The gate is driven by its tap guard: the guard is installed when the hook is created.
    preToolUse: createPreToolUseHook(createTapGuard("preToolUse", context)),
    postToolUse: new AsyncParallelHook<[PostToolUseEvent]>(["event"], "postToolUse"),
    userPromptSubmit: new AsyncSeriesWaterfallHook<[Attachment[], UserPromptSubmitEvent]>(
      ["attachments", "event"],
      "userPromptSubmit",
    ),
    taskSettled: new AsyncParallelHook<[TaskSettledEvent]>(["event"], "taskSettled"),
  };
  for (const name of Object.keys(hooks) as HookName[]) {
    if (name === "preToolUse") continue;
    const guard = createTapGuard(name, context);
    // The register interceptor sees every tap before it is stored, whichever tap method was used.
    (hooks[name] as AsyncParallelHook<[unknown]>).intercept({
      register: (tap) => guard(tap) as typeof tap,
    });
  }
  return Object.freeze(hooks);
}
