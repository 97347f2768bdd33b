import type { Attachment, HookResultEntry } from "@unforget/core";
import { HookError } from "./hook-error.ts";
import { HOOK_EVENT_NAMES, type HookName } from "./hook-event-names.ts";
import type {
  PreCompactEvent,
  PreCompactResult,
  PreToolUseDecision,
  PreToolUseEvent,
} from "./hook-events.ts";
import { createHookResultEntry } from "./hook-result-entry.ts";

/** The bus's own sinks, handed to a self-recording tap when it is registered on a bus. */
export interface BusSinks {
  /** Appends one entry through the bus's `onHookResult`; a sink that throws is reported, never rethrown. */
  record(entry: HookResultEntry): void;
  /** Reports through the bus's `onHookError`; never throws. */
  reportError(error: HookError): void;
}

/**
 * Tap functions that record their own hook results (the command-hooks plugin records one entry per command);
 * the guard still isolates their errors but does not record a second entry for them. `bind` is called when
 * the tap is registered, with the sinks of the bus it was registered on.
 */
const selfRecordingTaps = new WeakMap<object, ((sinks: BusSinks) => void) | undefined>();

export function markSelfRecording<F extends object>(fn: F, bind?: (sinks: BusSinks) => void): F {
  selfRecordingTaps.set(fn, bind);
  return fn;
}

/** What the guard needs from the session: where to report and record. */
export interface TapGuardContext {
  sessionId: string | undefined;
  reportError(error: HookError): void;
  record: ((entry: HookResultEntry) => void) | undefined;
}

interface Note {
  outcome: HookResultEntry["outcome"];
  output?: string;
  reason?: string;
}

interface Settled {
  /** What the tap hands to tapable (undefined: pass the previous value on / no decision). */
  value: unknown;
  /** What to record about it, if anything. */
  note?: Note;
  /** A problem to report even though the tap itself did not throw. */
  problem?: string;
}

/** How one kind of hook treats a tap's result and a tap's failure. */
interface TapPolicy {
  /** Skips the tap entirely (a vetoed compaction does not ask later plugins for instructions). */
  skip?(args: readonly unknown[]): boolean;
  /** Turns the tap's result into the value for tapable; throws when the result has the wrong shape. */
  accept(result: unknown, args: readonly unknown[], handler: string): Settled;
  /** Decides what a failed tap means: pass through (observers, transforms) or refuse (gates). */
  reject(message: string, args: readonly unknown[], handler: string): Settled;
}

interface RegisteredTap {
  name: string;
  type: "sync" | "async" | "promise";
  // biome-ignore lint/complexity/noBannedTypes: tapable stores taps as untyped functions
  fn: Function;
  stage?: number;
  before?: string;
}

type TapFunction = (...args: unknown[]) => unknown;

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

function attachmentText(attachments: readonly Attachment[]): string {
  return attachments
    .map((attachment) =>
      typeof attachment.content === "string"
        ? attachment.content
        : attachment.content
            .map((block) => ("text" in block ? String(block.text) : `[${block.type}]`))
            .join("\n"),
    )
    .join("\n");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const observerPolicy: TapPolicy = {
  accept: () => ({ value: undefined }),
  reject: (message) => ({ value: undefined, note: { outcome: "error", reason: message } }),
};

const attachmentsPolicy: TapPolicy = {
  accept(result, args) {
    if (result === undefined) return { value: undefined };
    if (!Array.isArray(result)) {
      throw new TypeError("it returned something other than an array of attachments");
    }
    const previous = args[0] as Attachment[];
    const added = result.length > previous.length ? result.slice(previous.length) : [];
    if (added.length === 0) return { value: result };
    return { value: result, note: { outcome: "success", output: attachmentText(added) } };
  },
  reject: (message) => ({ value: undefined, note: { outcome: "error", reason: message } }),
};

const preCompactPolicy: TapPolicy = {
  skip: (args) => (args[0] as PreCompactResult).veto !== undefined,
  accept(result, args, handler) {
    if (result === undefined) return { value: undefined };
    if (!isRecord(result) || typeof result.instructions !== "string") {
      throw new TypeError("it returned something other than { instructions: string, veto? }");
    }
    const previous = args[0] as PreCompactResult;
    const event = args[1] as PreCompactEvent;
    const instructions = result.instructions;
    const added = instructions.startsWith(previous.instructions)
      ? instructions.slice(previous.instructions.length).trim()
      : instructions;
    const veto = result.veto;
    if (veto !== undefined) {
      if (!isRecord(veto) || typeof veto.reason !== "string") {
        throw new TypeError("its veto is not { reason: string }");
      }
      if (event.trigger === "reactive") {
        return {
          value: { instructions },
          note: { outcome: "error", reason: "tried to veto a reactive compaction; the veto was ignored" },
          problem:
            "it tried to veto a reactive (emergency) compaction, which cannot be vetoed; the veto was ignored and the compaction goes on. Veto only when event.trigger is not 'reactive'",
        };
      }
      const by = typeof veto.by === "string" ? veto.by : handler;
      return {
        value: { instructions, veto: { reason: veto.reason, by } },
        note: { outcome: "blocked", reason: veto.reason },
      };
    }
    const value: PreCompactResult = { instructions };
    return added.length > 0 ? { value, note: { outcome: "success", output: added } } : { value };
  },
  reject(message, args, handler) {
    const previous = args[0] as PreCompactResult;
    const event = args[1] as PreCompactEvent;
    if (event.trigger === "reactive")
      return { value: undefined, note: { outcome: "error", reason: message } };
    const reason = `Plugin "${handler}" failed while preparing the compaction (${message}); the compaction was not run. Fix or remove the plugin.`;
    return {
      value: { instructions: previous.instructions, veto: { reason, by: handler } },
      note: { outcome: "error", reason: message },
    };
  },
};

const preToolUsePolicy: TapPolicy = {
  accept(result, _args, handler) {
    if (result === undefined) return { value: undefined };
    if (!isRecord(result)) throw new TypeError("it returned something other than a decision object");
    const decision = result as PreToolUseDecision;
    switch (decision.behavior) {
      case "allow":
        return { value: { behavior: "allow" } };
      case "deny": {
        if (typeof decision.reason !== "string") throw new TypeError("its deny decision has no reason");
        const by = typeof decision.by === "string" ? decision.by : handler;
        return {
          value: { behavior: "deny", reason: decision.reason, by },
          note: { outcome: "blocked", reason: decision.reason },
        };
      }
      case "rewrite":
        if (!isRecord(decision.input)) throw new TypeError("its rewrite decision has no input object");
        return {
          value: { behavior: "rewrite", input: decision.input },
          note: {
            outcome: "success",
            output: JSON.stringify(decision.input),
            reason: "rewrote the tool input",
          },
        };
      default:
        throw new TypeError("its decision behavior is not 'allow', 'deny' or 'rewrite'");
    }
  },
  reject(message, args, handler) {
    const event = args[0] as PreToolUseEvent;
    const reason = `Plugin "${handler}" failed while checking the ${event.toolName} call (${message}); the call was denied. Fix or remove the plugin.`;
    return { value: { behavior: "deny", reason, by: handler }, note: { outcome: "error", reason: message } };
  },
};

const policies: Record<HookName, TapPolicy> = {
  preCompact: preCompactPolicy,
  postCompact: observerPolicy,
  sessionStart: attachmentsPolicy,
  sessionEnd: observerPolicy,
  postSampling: observerPolicy,
  preToolUse: preToolUsePolicy,
  postToolUse: observerPolicy,
  userPromptSubmit: attachmentsPolicy,
  taskSettled: observerPolicy,
};

function toPromiseCall(tap: RegisteredTap): (args: readonly unknown[]) => unknown {
  const fn = tap.fn as TapFunction;
  if (tap.type === "async") {
    return (args) =>
      new Promise((resolve, reject) => {
        fn(...args, (error: unknown, result: unknown) => {
          if (error !== null && error !== undefined && error !== false) reject(error);
          else resolve(result);
        });
      });
  }
  return (args) => fn(...args);
}

/**
 * Wraps every tap of one hook so that its result is checked and its failure is contained according to the
 * hook's policy: observers and transforms isolate errors, gates fail closed.
 */
export function createTapGuard(
  hook: HookName,
  context: TapGuardContext,
): (tap: RegisteredTap) => RegisteredTap {
  const policy = policies[hook];
  const event = HOOK_EVENT_NAMES[hook];

  const record = (handler: string, note: Note, durationMs: number): void => {
    if (context.record === undefined) return;
    try {
      context.record(
        createHookResultEntry({ event, handler, ...note, durationMs, sessionId: context.sessionId }),
      );
    } catch (error) {
      context.reportError(
        new HookError(
          `Recording the ${event} result of "${handler}" failed (${describe(error)}); check the onHookResult sink.`,
          {
            hook,
            handler,
            cause: error,
          },
        ),
      );
    }
  };

  return (tap) => {
    const call = toPromiseCall(tap);
    const handler = tap.name;
    const selfRecording = selfRecordingTaps.has(tap.fn);
    selfRecordingTaps.get(tap.fn)?.({
      record(entry) {
        if (context.record === undefined) return;
        try {
          context.record(entry);
        } catch (error) {
          context.reportError(
            new HookError(
              `Recording the ${event} result of "${entry.handler}" failed (${describe(error)}); check the onHookResult sink.`,
              { hook, handler, cause: error },
            ),
          );
        }
      },
      reportError: context.reportError,
    });
    const guarded = async (...args: unknown[]): Promise<unknown> => {
      if (policy.skip?.(args) === true) return undefined;
      const started = performance.now();
      let settled: Settled;
      let failure: unknown;
      try {
        settled = policy.accept(await call(args), args, handler);
      } catch (error) {
        failure = error;
        settled = policy.reject(describe(error), args, handler);
      }
      const problem = failure !== undefined ? describe(failure) : settled.problem;
      if (problem !== undefined) {
        context.reportError(
          new HookError(
            `Plugin "${handler}" failed in ${hook}: ${problem}. ${
              failure !== undefined ? "The session goes on; fix or remove the plugin." : ""
            }`.trim(),
            { hook, handler, cause: failure },
          ),
        );
      }
      if (settled.note !== undefined && (!selfRecording || failure !== undefined)) {
        record(handler, settled.note, performance.now() - started);
      }
      return settled.value;
    };
    return { ...tap, type: "promise", fn: guarded };
  };
}
