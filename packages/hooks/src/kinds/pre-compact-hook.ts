import { AsyncSeriesWaterfallHook } from "tapable";
import type { HookVeto, PreCompactEvent, PreCompactResult } from "../hook-events.ts";
import { isRecord } from "../is-record.ts";
import { guardedHook, type HookBinding } from "./tap-guard.ts";
import { type Settled, type TapNote, type TapPolicy, tapFailed, UnusableTapResult } from "./tap-policy.ts";

/**
 * A value the guard hands on in a `preCompact` waterfall. It carries the user's own instructions in a private
 * field, so they reach every tap of the fire without a tap being able to change them, and the app's result
 * still reads, compares and serialises as `{ instructions, veto? }`.
 */
class PreCompactValue implements PreCompactResult {
  instructions: string;
  declare veto?: HookVeto;
  declare pin?: string[];
  readonly #userInstructions: string;

  constructor(instructions: string, userInstructions: string, veto?: HookVeto, pin?: readonly string[]) {
    this.instructions = instructions;
    if (veto !== undefined) this.veto = veto;
    if (pin !== undefined && pin.length > 0) this.pin = [...pin];
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

function replacedNote(added: string): TapNote {
  const note: TapNote = {
    outcome: "error",
    reason: "replaced the instructions it received; they were restored",
  };
  if (added !== "") note.output = added;
  return note;
}

/** The result of a tap that vetoed: honoured for a manual or auto compaction, ignored for a reactive one. */
function vetoed(
  veto: { reason: string; by?: unknown },
  value: { instructions: string; userInstructions: string; pin?: string[]; problem?: string },
  event: PreCompactEvent,
  handler: string,
): Settled {
  if (event.trigger === "reactive") {
    return {
      value: new PreCompactValue(value.instructions, value.userInstructions, undefined, value.pin),
      note: { outcome: "error", reason: "tried to veto a reactive compaction; the veto was ignored" },
      problem: `it tried to veto a reactive (emergency) compaction, which cannot be vetoed; the veto was ignored and the compaction goes on. Veto only when event.trigger is not 'reactive'${
        value.problem === undefined ? "" : `. Also, ${value.problem}`
      }`,
    };
  }
  const by = typeof veto.by === "string" ? veto.by : handler;
  const settled: Settled = {
    value: new PreCompactValue(
      value.instructions,
      value.userInstructions,
      { reason: veto.reason, by },
      value.pin,
    ),
    note: { outcome: "blocked", reason: veto.reason },
  };
  if (value.problem !== undefined) settled.problem = value.problem;
  return settled;
}

const preCompactPolicy: TapPolicy = {
  skip: (args) => (args[0] as PreCompactResult).veto !== undefined,
  pluginArgs(args) {
    // Skipped once vetoed: what a tap receives has no veto.
    const received = args[0] as PreCompactResult;
    const forPlugin: PreCompactResult = {
      instructions: received.instructions,
      userInstructions: userInstructionsOf(received),
      ...(received.pin ? { pin: [...received.pin] } : {}),
    };
    return [forPlugin, args[1]];
  },
  accept(result, args, handler) {
    if (result === undefined) return { value: undefined };
    if (!isRecord(result) || typeof result.instructions !== "string") {
      throw new UnusableTapResult("it returned something other than { instructions: string, veto?, pin? }");
    }
    const veto = result.veto;
    if (veto !== undefined && (!isRecord(veto) || typeof veto.reason !== "string")) {
      throw new UnusableTapResult("its veto is not { reason: string }");
    }
    const returned = result.pin;
    if (
      returned !== undefined &&
      (!Array.isArray(returned) || !returned.every((id) => typeof id === "string"))
    ) {
      throw new UnusableTapResult("its pin is not an array of message or tool_use ids (strings)");
    }
    const previous = args[0] as PreCompactResult;
    // The user's instructions travel unchanged: a tap cannot rewrite what command hooks see as theirs.
    const userInstructions = userInstructionsOf(previous);
    const { instructions, added, problem } = appendOnly(previous.instructions, result.instructions);
    // Pins only accumulate: what earlier taps pinned stays, whatever this one returned.
    const pin = [...new Set([...(previous.pin ?? []), ...((returned as string[] | undefined) ?? [])])];
    if (veto !== undefined) {
      const value = { instructions, userInstructions, pin, ...(problem === undefined ? {} : { problem }) };
      return vetoed(veto as { reason: string; by?: unknown }, value, args[1] as PreCompactEvent, handler);
    }
    const value = new PreCompactValue(instructions, userInstructions, undefined, pin);
    if (problem !== undefined) return { value, note: replacedNote(added), problem };
    return added.length > 0 ? { value, note: { outcome: "success", output: added } } : { value };
  },
  // Blocking a compaction is the dangerous direction (the context then grows until the emergency path), so a
  // failing tap only loses its own contribution: only an explicit veto vetoes.
  reject: (message, args) =>
    tapFailed(
      undefined,
      message,
      (args[1] as PreCompactEvent).trigger === "reactive"
        ? "its instructions were left out and the reactive compaction goes on"
        : "its instructions were left out and the compaction goes on (only an explicit veto stops a compaction)",
    ),
};

/**
 * Creates the bus's `preCompact` waterfall over `{ instructions, veto? }`: instructions only grow, a veto
 * travels in the value and stops the later taps, and a reactive compaction cannot be vetoed.
 */
export function createPreCompactHook(
  binding: HookBinding,
): AsyncSeriesWaterfallHook<[PreCompactResult, PreCompactEvent]> {
  return guardedHook(
    new AsyncSeriesWaterfallHook<[PreCompactResult, PreCompactEvent]>(["result", "event"], "preCompact"),
    { hook: "preCompact", event: "PreCompact", binding },
    preCompactPolicy,
  );
}
