import type { Message, ToolResultBlock, ToolUseBlock } from "@unforget/core";
import {
  CONTINUATION_ERROR_LINES,
  CONTINUATION_INPUT_CHARS,
  CONTINUATION_MIN_TOKENS,
  CONTINUATION_SHARE,
  CONTINUATION_SHARE_OF_REPLACED,
  ERROR_LINE_CHARS,
} from "../defaults.ts";
import { clearedRecord } from "../layers/clearable-outputs.ts";
import { foldedCallRecords } from "../layers/collapse-context.ts";
import {
  clipOutcome,
  describeOutcome,
  findErrorLines,
  findExitStatus,
} from "../tool-outputs/tool-output-record.ts";
import { carriedCount, readCarriedUserMessages } from "./carried-user-messages.ts";
import {
  type Continuation,
  type OpenError,
  readContinuation,
  readContinuationLastUser,
  renderContinuation,
} from "./continuation-text.ts";
import {
  clip,
  describeToolCall,
  estimateTokens,
  isUserAuthored,
  oneLine,
  resultText,
  userText,
} from "./conversation.ts";

export type { Continuation } from "./continuation-text.ts";

const TODO_TOOLS = /^(todowrite|updateplan|todo|writetodos)$/;
const FAILED_OUTCOME = /^(exit -?[1-9]\d*|error)(?:: (.*))?$/;

/** How many user messages a message stands for: one the user wrote, or those a summary or placeholder carries. */
export function userTurnsIn(message: Message): number {
  if (isUserAuthored(message)) return 1;
  if (message.role !== "user" || !(message.isMeta || message.isCompactSummary)) return 0;
  const text = userText(message);
  const carried = readCarriedUserMessages(text);
  if (carried) return carriedCount(carried);
  return message.metadata?.reason === "snip"
    ? text.split("\n").filter((line) => line.startsWith('- "')).length
    : 0;
}

interface Walk {
  continuation: Continuation;
  turn: number;
  calls: Map<string, { use: ToolUseBlock; turn: number }>;
  lastUser?: { turn: number; text: string; message?: Message };
  /** The turn of the last user message, and whether an answer without tool calls followed it. */
  answered: boolean;
  todos?: string[];
}

/** Adds a failed call to the open errors (replacing an earlier failure of the same call). */
function openError(walk: Walk, error: OpenError): void {
  walk.continuation.openErrors = walk.continuation.openErrors.filter((open) => open.call !== error.call);
  walk.continuation.openErrors.push(error);
}

/** A successful run of a call closes its open errors. */
function closeErrors(walk: Walk, call: string): void {
  walk.continuation.openErrors = walk.continuation.openErrors.filter((open) => open.call !== call);
}

/** The outcome of one tool result: failed or not, its status and first error lines, from the output or its record. */
function outcomeOf(block: ToolResultBlock): {
  failed: boolean;
  status: string;
  lines: string[];
  outcome: string;
} {
  const text = resultText(block);
  const record = clearedRecord(text);
  if (record !== undefined) {
    // A cleared output keeps `call → outcome`; the outcome is what the output came to.
    const at = record.indexOf(" → ");
    const outcome = at < 0 ? record : record.slice(at + 3);
    return fromRecordOutcome(outcome, block.is_error === true);
  }
  const exit = findExitStatus(text);
  const failed = block.is_error === true || (exit !== undefined && exit !== 0);
  const outcome = clipOutcome(describeOutcome(text, block.is_error === true));
  if (!failed) return { failed, status: "ok", lines: [], outcome };
  const errorLines = findErrorLines(text, CONTINUATION_ERROR_LINES);
  const lines =
    errorLines.length > 0
      ? errorLines
      : text
          .split("\n")
          .map((line) => line.trim())
          .filter((line) => line.length > 0)
          .slice(0, CONTINUATION_ERROR_LINES)
          .map((line) => clip(oneLine(line), ERROR_LINE_CHARS));
  return { failed, status: exit !== undefined && exit !== 0 ? `exit ${exit}` : "error", lines, outcome };
}

/** The outcome part of a record (`exit 1: FAIL a | AssertionError … (40 lines)`), read as an outcome. */
function fromRecordOutcome(
  outcome: string,
  isError: boolean,
): { failed: boolean; status: string; lines: string[]; outcome: string } {
  const failed = FAILED_OUTCOME.exec(outcome);
  if (!failed && !isError) return { failed: false, status: "ok", lines: [], outcome };
  const detail = (failed?.[2] ?? outcome).replace(/ \([\d,]+ lines\)$/, "");
  return {
    failed: true,
    status: failed?.[1] ?? "error",
    lines: detail.split(" | ").slice(0, CONTINUATION_ERROR_LINES),
    outcome,
  };
}

function noteResult(walk: Walk, block: ToolResultBlock, replaced: boolean): void {
  const call = walk.calls.get(block.tool_use_id);
  const name = call ? describeToolCall(call.use, 200) : "(tool)";
  const result = outcomeOf(block);
  // A failure in the kept tail is in the request verbatim: only a replaced one is carried.
  if (result.failed && replaced) {
    openError(walk, {
      turn: call?.turn ?? walk.turn,
      id: block.tool_use_id,
      call: name,
      status: result.status,
      lines: result.lines,
    });
  } else if (!result.failed) {
    closeErrors(walk, name);
  }
  if (replaced) {
    walk.continuation.done.push({
      turn: call?.turn ?? walk.turn,
      id: block.tool_use_id,
      record: clip(
        `${describeToolCall(call?.use ?? { name: "tool", input: {} })} → ${oneLine(result.outcome)}`,
        240,
      ),
    });
  }
}

/** The records a fold of old tool runs (collapse) carries: done actions, failures among them. */
function noteFolded(walk: Walk, text: string): void {
  for (const { call, outcome } of foldedCallRecords(text) ?? []) {
    walk.continuation.done.push({ turn: walk.turn, record: clip(`${call} → ${outcome}`, 240) });
    const result = fromRecordOutcome(outcome, false);
    if (result.failed) openError(walk, { turn: walk.turn, call, status: result.status, lines: result.lines });
    else closeErrors(walk, call);
  }
}

function noteAssistant(walk: Walk, message: Message): void {
  const uses = message.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
  if (uses.length === 0) {
    if (message.content.some((block) => block.type === "text" && block.text.trim().length > 0))
      walk.answered = true;
    return;
  }
  walk.answered = false;
  for (const use of uses) {
    walk.calls.set(use.id, { use, turn: walk.turn });
    if (!TODO_TOOLS.test(use.name.toLowerCase().replace(/[-_]/g, ""))) continue;
    const input = (use.input ?? {}) as Record<string, unknown>;
    const list = Array.isArray(input.todos)
      ? input.todos
      : Array.isArray(input.plan)
        ? input.plan
        : undefined;
    if (!list) continue;
    walk.todos = list.flatMap((item) => {
      const record = (item ?? {}) as Record<string, unknown>;
      const content = [record.content, record.step, record.task].find((value) => typeof value === "string");
      const status = typeof record.status === "string" ? record.status : "pending";
      return typeof content === "string" && status !== "completed" ? [`${content} (${status})`] : [];
    });
  }
}

function walkMessage(walk: Walk, message: Message, replaced: boolean): void {
  if (isUserAuthored(message)) {
    walk.turn++;
    walk.lastUser = { turn: walk.turn, text: userText(message), message };
    walk.answered = false;
    return;
  }
  if (message.role === "assistant") {
    noteAssistant(walk, message);
    return;
  }
  if (message.role === "user" && (message.isMeta || message.isCompactSummary)) {
    const text = userText(message);
    const previous = readContinuation(text);
    if (previous) {
      const { continuation } = walk;
      continuation.earlier = {
        count: continuation.earlier.count + previous.earlier.count,
        ids: [...continuation.earlier.ids, ...previous.earlier.ids],
      };
      continuation.earlierErrors = {
        count: continuation.earlierErrors.count + previous.earlierErrors.count,
        ids: [...continuation.earlierErrors.ids, ...previous.earlierErrors.ids],
      };
      continuation.done.push(...previous.done);
      for (const error of previous.openErrors) openError(walk, error);
    }
    if (message.metadata?.reason === "collapse") noteFolded(walk, text);
    const turns = userTurnsIn(message);
    if (turns > 0) {
      walk.turn += turns;
      // Carried by that summary or placeholder; quoted again only when it was its continuation that quoted it.
      const quoted = readContinuationLastUser(text);
      walk.lastUser =
        quoted === undefined ? { turn: walk.turn, text: "" } : { turn: walk.turn, text: quoted, message };
    }
    return;
  }
  for (const block of message.content) {
    if (block.type === "tool_result") noteResult(walk, block, replaced);
  }
}

export interface ContinuationOptions {
  /** Messages before the replaced part that stay (a kept head, the summary a partial compaction keeps). */
  before?: readonly Message[];
  /** The user's messages the new summary or placeholder carries verbatim: the last one is not quoted twice. */
  carriedVerbatim?: readonly string[];
}

/**
 * What the next request must hold after `replaced` is removed and `kept` follows it, read from the messages
 * (and from the continuation a replaced summary or placeholder carried), never from a summariser's text: the
 * user's last message (when neither the kept tail nor the carried messages hold it verbatim), the latest call
 * with its input and outcome, every replaced call marked done with its user turn, what is pending (the last
 * request not answered yet, the open todo items), and the open errors — failed calls not followed by a
 * successful run of the same tool with the same path or command.
 */
export function collectContinuation(
  replaced: readonly Message[],
  kept: readonly Message[],
  options: ContinuationOptions = {},
): Continuation {
  const walk: Walk = {
    continuation: {
      done: [],
      earlier: { count: 0, ids: [] },
      pending: [],
      openErrors: [],
      earlierErrors: { count: 0, ids: [] },
    },
    turn: 0,
    calls: new Map(),
    answered: false,
  };
  for (const message of options.before ?? []) walk.turn += userTurnsIn(message);
  for (const message of replaced) walkMessage(walk, message, true);
  const lastReplacedUser = walk.lastUser;
  let lastKeptCall: { use: ToolUseBlock; turn: number } | undefined;
  for (const message of kept) {
    walkMessage(walk, message, false);
    for (const block of message.content) {
      if (block.type === "tool_use") lastKeptCall = { use: block, turn: walk.turn };
    }
  }
  const { continuation } = walk;
  const carried = options.carriedVerbatim ?? [];
  // The last user message is quoted only when it was replaced and nothing else carries it whole.
  if (
    walk.lastUser === lastReplacedUser &&
    lastReplacedUser?.message &&
    carried.at(-1) !== lastReplacedUser.text
  ) {
    continuation.lastUser = { turn: lastReplacedUser.turn, text: lastReplacedUser.text };
  }
  continuation.executionPoint = executionPoint(replaced, walk, lastKeptCall);
  if (walk.lastUser && !walk.answered) {
    continuation.pending.push(
      `the request of turn ${walk.lastUser.turn} (the user's last message) is not finished: no answer has followed it yet`,
    );
  }
  for (const todo of walk.todos ?? []) continuation.pending.push(`todo: ${todo}`);
  return continuation;
}

function executionPoint(
  replaced: readonly Message[],
  walk: Walk,
  lastKeptCall: { use: ToolUseBlock; turn: number } | undefined,
): Continuation["executionPoint"] {
  if (lastKeptCall) {
    const { use, turn } = lastKeptCall;
    return { turn, id: use.id, call: describeToolCall(use), input: "", outcome: "", inTail: true };
  }
  const last = walk.continuation.done.findLast(
    (action) => action.id !== undefined && walk.calls.has(action.id),
  );
  const call = last?.id ? walk.calls.get(last.id) : undefined;
  if (!last || !call) return undefined;
  const result = replaced
    .flatMap((message) => message.content)
    .find((block): block is ToolResultBlock => block.type === "tool_result" && block.tool_use_id === last.id);
  const outcome = result ? outcomeOf(result) : undefined;
  return {
    turn: call.turn,
    id: call.use.id,
    call: describeToolCall(call.use),
    input: clip(JSON.stringify(call.use.input ?? {}), CONTINUATION_INPUT_CHARS),
    outcome: outcome
      ? outcome.failed
        ? `${outcome.status}: ${outcome.lines.join(" | ")}`
        : `ok: ${oneLine(outcome.outcome)}`
      : "no result",
    inTail: false,
  };
}

/** What the continuation may take of a summary's budget (it comes out of it, as the carried user messages do). */
export function continuationBudget(summaryMaxTokens: number, replaced: readonly Message[]): number {
  const share = Math.max(CONTINUATION_MIN_TOKENS, Math.floor(summaryMaxTokens * CONTINUATION_SHARE));
  return Math.min(
    share,
    Math.max(
      CONTINUATION_MIN_TOKENS / 4,
      Math.floor(estimateTokens(replaced) * CONTINUATION_SHARE_OF_REPLACED),
    ),
  );
}

/** The `<continuation>` block for a removal (`collectContinuation`, then `renderContinuation`), or undefined. */
export function continuationBlock(
  replaced: readonly Message[],
  kept: readonly Message[],
  budgetTokens: number,
  options: ContinuationOptions = {},
): string | undefined {
  return renderContinuation(collectContinuation(replaced, kept, options), budgetTokens);
}
