import { isDeepStrictEqual } from "node:util";
import type { Attachment, HookResultEntry } from "@unforget/core";
import { HookError } from "./hook-error.ts";
import { HOOK_EVENT_NAMES, type HookName } from "./hook-event-names.ts";
import type {
  HookVeto,
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

/**
 * One `preToolUse` call as the gate drives it: created by `PreToolUseHook.promise`, handed to every guarded tap
 * in order, read once at the end for the final decision.
 */
export interface PreToolUseRun {
  /** The event the app fired; never modified. */
  readonly event: PreToolUseEvent;
  /** The input later taps see: the event's, or the last rewrite's. */
  input: Record<string, unknown>;
  /** Set by the first tap that rewrote the input. */
  rewritten: boolean;
  /** Set by a tap that answered "allow"; it does not stop the taps after it. */
  allowed: boolean;
  /** Set by the tap that denied (or failed); the gate stops there. */
  denied?: { reason: string; by: string };
}

/** How one kind of hook treats a tap's result and a tap's failure. */
interface TapPolicy {
  /** Skips the tap entirely (a vetoed compaction does not ask later plugins for instructions). */
  skip?(args: readonly unknown[]): boolean;
  /** The arguments the plugin's function receives, when they differ from what tapable passes the guard. */
  pluginArgs?(args: readonly unknown[]): readonly unknown[];
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

function sameAttachment(left: Attachment | undefined, right: Attachment): boolean {
  return left === right || isDeepStrictEqual(left, right);
}

/** A tap may add attachments after the ones it received; removing or replacing them is undone and reported. */
const attachmentsPolicy: TapPolicy = {
  accept(result, args) {
    if (result === undefined) return { value: undefined };
    if (!Array.isArray(result)) {
      throw new TypeError("it returned something other than an array of attachments");
    }
    const previous = args[0] as Attachment[];
    const kept = previous.every((attachment, index) => sameAttachment(result[index], attachment));
    if (kept) {
      const added = result.slice(previous.length) as Attachment[];
      if (added.length === 0) return { value: result };
      return { value: result, note: { outcome: "success", output: attachmentText(added) } };
    }
    // Restore what the app and earlier taps contributed; keep what this tap brought that is new.
    const added = (result as Attachment[]).filter(
      (attachment) => !previous.some((earlier) => sameAttachment(attachment, earlier)),
    );
    const reason = `removed or replaced attachments it received (${previous.length} received); they were restored`;
    const note: Note = { outcome: "error", reason };
    if (added.length > 0) note.output = attachmentText(added);
    return {
      value: [...previous, ...added],
      note,
      problem: `it ${reason} and its own were appended after them. Return [...attachments, ...yours]`,
    };
  },
  reject: (message) => ({ value: undefined, note: { outcome: "error", reason: message } }),
};

/**
 * A value the guard hands on in a `preCompact` waterfall. It carries the user's own instructions in a private
 * field, so they reach every tap of the fire without a tap being able to change them, and the app's result
 * still reads, compares and serialises as `{ instructions, veto? }`.
 */
class PreCompactValue implements PreCompactResult {
  instructions: string;
  declare veto?: HookVeto;
  readonly #userInstructions: string;

  constructor(instructions: string, userInstructions: string, veto?: HookVeto) {
    this.instructions = instructions;
    if (veto !== undefined) this.veto = veto;
    this.#userInstructions = userInstructions;
  }

  /** The user's instructions as the app passed them: the first tap receives them as `instructions`. */
  static userInstructionsOf(result: PreCompactResult): string {
    return result instanceof PreCompactValue
      ? result.#userInstructions
      : (result.userInstructions ?? result.instructions);
  }
}

const userInstructionsOf = PreCompactValue.userInstructionsOf;

/**
 * Keeps the instructions a tap received at the front. A tap that returned something else gets its text
 * appended when it is new, and a problem to report.
 */
function appendOnly(
  received: string,
  returned: string,
): { instructions: string; added: string; problem?: string } {
  // Trailing whitespace of the received text may be trimmed away; that drops nothing.
  const kept = returned.startsWith(received) ? received : received.trimEnd();
  if (returned.startsWith(kept)) {
    return { instructions: returned, added: returned.slice(kept.length).trim() };
  }
  const text = returned.trim();
  const added = text !== "" && !received.includes(text) ? text : "";
  const instructions = added === "" ? received : received === "" ? added : `${received}\n\n${added}`;
  return {
    instructions,
    added,
    problem: `it returned instructions that do not start with the instructions it received (the user's, then earlier plugins'); those were kept${
      added === "" ? "" : " and its text was appended after them"
    }. Return \`\${result.instructions}\\n<your text>\``,
  };
}

function replacedNote(added: string): Note {
  const note: Note = {
    outcome: "error",
    reason: "replaced the instructions it received; they were restored",
  };
  if (added !== "") note.output = added;
  return note;
}

const preCompactPolicy: TapPolicy = {
  skip: (args) => (args[0] as PreCompactResult).veto !== undefined,
  pluginArgs(args) {
    // Skipped once vetoed: what a tap receives has no veto.
    const received = args[0] as PreCompactResult;
    const forPlugin: PreCompactResult = {
      instructions: received.instructions,
      userInstructions: userInstructionsOf(received),
    };
    return [forPlugin, args[1]];
  },
  accept(result, args, handler) {
    if (result === undefined) return { value: undefined };
    if (!isRecord(result) || typeof result.instructions !== "string") {
      throw new TypeError("it returned something other than { instructions: string, veto? }");
    }
    const veto = result.veto;
    if (veto !== undefined && (!isRecord(veto) || typeof veto.reason !== "string")) {
      throw new TypeError("its veto is not { reason: string }");
    }
    const previous = args[0] as PreCompactResult;
    const event = args[1] as PreCompactEvent;
    // The user's instructions travel unchanged: a tap cannot rewrite what command hooks see as theirs.
    const userInstructions = userInstructionsOf(previous);
    const { instructions, added, problem } = appendOnly(previous.instructions, result.instructions);
    if (veto !== undefined) {
      if (event.trigger === "reactive") {
        return {
          value: new PreCompactValue(instructions, userInstructions),
          note: { outcome: "error", reason: "tried to veto a reactive compaction; the veto was ignored" },
          problem: `it tried to veto a reactive (emergency) compaction, which cannot be vetoed; the veto was ignored and the compaction goes on. Veto only when event.trigger is not 'reactive'${
            problem === undefined ? "" : `. Also, ${problem}`
          }`,
        };
      }
      const by = typeof veto.by === "string" ? veto.by : handler;
      const settled: Settled = {
        value: new PreCompactValue(instructions, userInstructions, { reason: veto.reason as string, by }),
        note: { outcome: "blocked", reason: veto.reason as string },
      };
      if (problem !== undefined) settled.problem = problem;
      return settled;
    }
    const value = new PreCompactValue(instructions, userInstructions);
    if (problem !== undefined) return { value, note: replacedNote(added), problem };
    return added.length > 0 ? { value, note: { outcome: "success", output: added } } : { value };
  },
  reject(message, args, handler) {
    const previous = args[0] as PreCompactResult;
    const event = args[1] as PreCompactEvent;
    if (event.trigger === "reactive")
      return { value: undefined, note: { outcome: "error", reason: message } };
    const reason = `Plugin "${handler}" failed while preparing the compaction (${message}); the compaction was not run. Fix or remove the plugin.`;
    return {
      value: new PreCompactValue(previous.instructions, userInstructionsOf(previous), {
        reason,
        by: handler,
      }),
      note: { outcome: "error", reason: message },
    };
  },
};

/** The event a `preToolUse` tap sees: the app's, with the input of the last rewrite. */
function currentToolEvent(run: PreToolUseRun): PreToolUseEvent {
  return run.rewritten ? { ...run.event, input: run.input } : run.event;
}

/**
 * The gate: every tap runs in order and sees the input as rewritten so far; a deny (or a failure) stops the
 * run and wins. The guard returns `true` to stop tapable's bail loop, `undefined` to go on.
 */
const preToolUsePolicy: TapPolicy = {
  pluginArgs: (args) => [currentToolEvent(args[0] as PreToolUseRun)],
  accept(result, args, handler) {
    if (result === undefined) return { value: undefined };
    if (!isRecord(result)) throw new TypeError("it returned something other than a decision object");
    const run = args[0] as PreToolUseRun;
    const decision = result as PreToolUseDecision;
    switch (decision.behavior) {
      case "allow":
        run.allowed = true;
        return { value: undefined };
      case "deny": {
        if (typeof decision.reason !== "string") throw new TypeError("its deny decision has no reason");
        const by = typeof decision.by === "string" ? decision.by : handler;
        run.denied = { reason: decision.reason, by };
        return { value: true, note: { outcome: "blocked", reason: decision.reason } };
      }
      case "rewrite":
        if (!isRecord(decision.input)) throw new TypeError("its rewrite decision has no input object");
        run.input = decision.input;
        run.rewritten = true;
        return {
          value: undefined,
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
    const run = args[0] as PreToolUseRun;
    const reason = `Plugin "${handler}" failed while checking the ${run.event.toolName} call (${message}); the call was denied. Fix or remove the plugin.`;
    run.denied = { reason, by: handler };
    return { value: true, note: { outcome: "error", reason: message } };
  },
};

/** The decision of a finished run: deny if any tap denied, else rewrite if any rewrote, else allow / none. */
export function preToolUseDecision(run: PreToolUseRun): PreToolUseDecision | undefined {
  if (run.denied !== undefined) return { behavior: "deny", reason: run.denied.reason, by: run.denied.by };
  if (run.rewritten) return { behavior: "rewrite", input: run.input };
  return run.allowed ? { behavior: "allow" } : undefined;
}

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
        settled = policy.accept(await call(policy.pluginArgs?.(args) ?? args), args, handler);
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
