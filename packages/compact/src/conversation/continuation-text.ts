import {
  CONTINUATION_DONE_SHOWN,
  CONTINUATION_ERROR_LINES,
  CONTINUATION_OPEN_ERRORS_LISTED,
  CONTINUATION_OPEN_ERRORS_SHOWN,
  ERROR_LINE_CHARS,
  REPLACED_IDS_SHOWN_AT_EACH_END,
} from "../defaults.ts";
import { clip, estimateTextTokens } from "./conversation.ts";

/** One action the replaced part ran: its user turn, its history id (when it has one) and its record. */
export interface DoneAction {
  turn: number;
  id?: string;
  /** `Tool(argument) → outcome`, one line. */
  record: string;
}

/** A failed call not followed by a successful run of the same call (same tool, same path or command). */
export interface OpenError {
  turn: number;
  id?: string;
  /** `Tool(argument)`: what a later successful run must match to close it. */
  call: string;
  /** `exit 2` or `error`. */
  status: string;
  /** Its first error lines (the output's first lines when none says what went wrong). */
  lines: string[];
}

/** What the next request must hold after a layer removed messages, derived from them (never from a summariser's text). */
export interface Continuation {
  /** The user's last message, when nothing else in the request holds it verbatim. */
  lastUser?: { turn: number; text: string };
  /** The latest tool call: where it is, its input and its outcome. */
  executionPoint?: {
    turn: number;
    id: string;
    call: string;
    input: string;
    outcome: string;
    inTail: boolean;
  };
  done: DoneAction[];
  /** Done actions older than those listed: how many, and the history ids of the first and last few. */
  earlier: { count: number; ids: string[] };
  pending: string[];
  openErrors: OpenError[];
  /** Open errors older than those listed: how many, and the history ids of the first and last few. */
  earlierErrors: { count: number; ids: string[] };
}

export const CONTINUATION_OPEN = "<continuation>";
export const CONTINUATION_CLOSE = "</continuation>";
const INTRO =
  "Where the work stands, derived by the system from the messages this replaces (not written by the summariser); where the summary disagrees, this holds.";
const SHORT_INTRO = "Where the work stands, derived by the system; where the summary disagrees, this holds.";
const DONE_HEADER =
  "Done (each ran once, in the user turn named; do not run one again unless a later user message asks for it):";
const SHORT_DONE_HEADER = "Done (do not run one again unless a later user message asks for it):";
const PENDING_HEADER = "Pending:";
const ERRORS_HEADER = "Open errors (failed and not since run successfully with the same input):";
const DONE_LINE = /^- turn (\d+)(?: \[([^\]\s]+)\])? done: (.*)$/;
const EARLIER_LINE = /^- \((\d+) earlier actions? done(?:; history ids ([^)]*))?\)$/;
const EARLIER_ERRORS_LINE = /^- \((\d+) earlier open errors?(?:; history ids ([^:)]*))?(?::[^)]*)?\)$/;
const ERROR_LINE = /^- turn (\d+)(?: \[([^\]\s]+)\])? (.*) → (exit -?\d+|error)$/;
const ERROR_DETAIL = "    ";

// The user's text could hold the tags: one more backslash on the way in, one less on the way out.
const escapeTags = (text: string) =>
  text.replace(/<(\/?)(\\*)(continuation|last-user-message|user-messages?)\b/g, "<$1\\$2$3");
const unescapeTags = (text: string) =>
  text.replace(/<(\/?)\\(\\*)(continuation|last-user-message|user-messages?)\b/g, "<$1$2$3");

/** The ids of a long list as a continuation names them: every one up to ten, else the first and last five. */
export function shownIds(ids: readonly string[]): string[] {
  const each = REPLACED_IDS_SHOWN_AT_EACH_END;
  return ids.length <= each * 2 ? [...ids] : [...ids.slice(0, each), "…", ...ids.slice(-each)];
}

interface Shape {
  done: number;
  errors: number;
  errorLines: number;
  input: boolean;
  /** Characters each error line keeps (default: as found, the first up to 500). */
  lineChars?: number;
  /** The tightest shape: the short intro, and earlier actions counted without their ids (history_search finds them). */
  tight?: boolean;
}

/** The `<continuation>` block, in the given shape (how much of each part is shown). */
function render(continuation: Continuation, shape: Shape): string {
  const parts = [CONTINUATION_OPEN, shape.tight ? SHORT_INTRO : INTRO];
  const { lastUser, executionPoint: point } = continuation;
  if (lastUser) {
    parts.push(
      `The user's last message (turn ${lastUser.turn}), verbatim:`,
      `<last-user-message>\n${escapeTags(lastUser.text)}\n</last-user-message>`,
    );
  }
  // The tightest shape leaves out a latest call kept verbatim after the message: the request shows it.
  if (point && !(shape.tight && point.inTail)) {
    const input = shape.input && point.input.length > 0 ? ` with input ${point.input}` : "";
    parts.push(
      point.inTail
        ? `Latest execution point (turn ${point.turn}): ${point.call} [${point.id}], kept verbatim after this message.`
        : `Latest execution point (turn ${point.turn}): ${point.call} [${point.id}]${input} → ${point.outcome}`,
    );
  }
  const hidden = Math.max(0, continuation.done.length - shape.done);
  const shown = continuation.done.slice(hidden);
  const earlierCount = continuation.earlier.count + hidden;
  if (shown.length > 0 || earlierCount > 0) {
    parts.push(shape.tight ? SHORT_DONE_HEADER : DONE_HEADER);
    if (earlierCount > 0) {
      const ids = shape.tight
        ? []
        : shownIds([
            ...continuation.earlier.ids,
            ...continuation.done.slice(0, hidden).flatMap((action) => (action.id ? [action.id] : [])),
          ]);
      parts.push(
        `- (${earlierCount} earlier action${earlierCount === 1 ? "" : "s"} done${ids.length > 0 ? `; history ids ${ids.join(", ")}` : ""})`,
      );
    }
    for (const action of shown) {
      parts.push(`- turn ${action.turn}${action.id ? ` [${action.id}]` : ""} done: ${action.record}`);
    }
  }
  if (continuation.pending.length > 0)
    parts.push(PENDING_HEADER, ...continuation.pending.map((line) => `- ${line}`));
  // Past the listed ones, the oldest open errors are counted with their ids: the list stays bounded.
  const unlisted = Math.max(0, continuation.openErrors.length - CONTINUATION_OPEN_ERRORS_LISTED);
  const listed = continuation.openErrors.slice(unlisted);
  const earlierErrors = continuation.earlierErrors.count + unlisted;
  if (listed.length > 0 || earlierErrors > 0) {
    parts.push(ERRORS_HEADER);
    if (earlierErrors > 0) {
      const ids = shownIds([
        ...continuation.earlierErrors.ids,
        ...continuation.openErrors.slice(0, unlisted).flatMap((error) => (error.id ? [error.id] : [])),
      ]);
      parts.push(
        `- (${earlierErrors} earlier open error${earlierErrors === 1 ? "" : "s"}${ids.length > 0 ? `; history ids ${ids.join(", ")}` : ""}: read one with history_read, find the others with history_search)`,
      );
    }
    listed.forEach((error, index) => {
      parts.push(`- turn ${error.turn}${error.id ? ` [${error.id}]` : ""} ${error.call} → ${error.status}`);
      // The most recent errors keep their lines; older ones past the shape are named by call and id.
      const withLines = index >= listed.length - shape.errors;
      if (!withLines) return;
      for (const line of error.lines.slice(0, shape.errorLines)) {
        parts.push(`${ERROR_DETAIL}${shape.lineChars ? clip(line, shape.lineChars) : line}`);
      }
    });
  }
  parts.push(CONTINUATION_CLOSE);
  return parts.join("\n");
}

/**
 * The `<continuation>` block within `budgetTokens`: everything when it fits, else fewer done actions listed
 * (the rest counted with their ids), fewer error lines, and the latest call without its input — down to a floor
 * that may pass the budget: every open error with its first line. Undefined when there is nothing to say, or
 * when even the floor is over the budget and there is neither an open error nor a last user message to carry.
 */
export function renderContinuation(continuation: Continuation, budgetTokens: number): string | undefined {
  const empty =
    !continuation.lastUser &&
    !continuation.executionPoint &&
    continuation.done.length === 0 &&
    continuation.earlier.count === 0 &&
    continuation.pending.length === 0 &&
    continuation.openErrors.length === 0 &&
    continuation.earlierErrors.count === 0;
  if (empty) return undefined;
  // Done actions give way first, then error lines beyond the first, then the input. The floor, like the user's
  // messages' floor, is every open error (the most recent dozen) with its first line: they are never dropped.
  const all = CONTINUATION_OPEN_ERRORS_SHOWN;
  const shapes: Shape[] = [
    { done: CONTINUATION_DONE_SHOWN, errors: all, errorLines: CONTINUATION_ERROR_LINES, input: true },
    { done: 4, errors: all, errorLines: 3, input: true },
    { done: 2, errors: all, errorLines: 1, input: true },
    { done: 0, errors: all, errorLines: 1, input: false, lineChars: ERROR_LINE_CHARS },
    { done: 0, errors: all, errorLines: 1, input: false, lineChars: ERROR_LINE_CHARS, tight: true },
  ];
  let text = "";
  for (const shape of shapes) {
    text = render(continuation, shape);
    if (estimateTextTokens(text) <= budgetTokens) return text;
  }
  // Over the budget even at the floor: what must stay (open errors, the user's last message) stays; without
  // them a small span gets no block, so that its summary still shrinks it.
  return continuation.openErrors.length > 0 || continuation.earlierErrors.count > 0 || continuation.lastUser
    ? text
    : undefined;
}

/** The last `<continuation>` block in a message (its tags included), or undefined. */
export function continuationIn(text: string): string | undefined {
  const start = text.lastIndexOf(`\n${CONTINUATION_OPEN}\n`);
  const from = start >= 0 ? start + 1 : text.startsWith(`${CONTINUATION_OPEN}\n`) ? 0 : -1;
  if (from < 0) return undefined;
  const end = text.indexOf(`\n${CONTINUATION_CLOSE}`, from);
  return text.slice(from, end < 0 ? text.length : end + 1 + CONTINUATION_CLOSE.length);
}

/**
 * The done actions and open errors a summary message or placeholder's `<continuation>` block holds, read back
 * (a later removal carries them on); undefined when it has none. The user's last message is skipped, so its text
 * never reads as a record.
 */
export function readContinuation(
  text: string,
): Pick<Continuation, "done" | "earlier" | "openErrors" | "earlierErrors"> | undefined {
  const block = continuationIn(text);
  if (block === undefined) return undefined;
  const quoted = /<last-user-message>\n[\s\S]*?\n<\/last-user-message>/.exec(block);
  const lines = (quoted ? block.replace(quoted[0], "") : block).split("\n");
  const read: Pick<Continuation, "done" | "earlier" | "openErrors" | "earlierErrors"> = {
    done: [],
    earlier: { count: 0, ids: [] },
    openErrors: [],
    earlierErrors: { count: 0, ids: [] },
  };
  let section = "";
  for (const line of lines) {
    if (
      line === DONE_HEADER ||
      line === SHORT_DONE_HEADER ||
      line === PENDING_HEADER ||
      line === ERRORS_HEADER
    ) {
      section = line === SHORT_DONE_HEADER ? DONE_HEADER : line;
      continue;
    }
    if (section === DONE_HEADER) {
      const earlier = EARLIER_LINE.exec(line);
      if (earlier) {
        read.earlier = countedIds(earlier);
        continue;
      }
      const done = DONE_LINE.exec(line);
      if (done)
        read.done.push({ turn: Number(done[1]), ...(done[2] ? { id: done[2] } : {}), record: done[3]! });
    } else if (section === ERRORS_HEADER) {
      const earlier = EARLIER_ERRORS_LINE.exec(line);
      if (earlier) {
        read.earlierErrors = countedIds(earlier);
        continue;
      }
      const error = ERROR_LINE.exec(line);
      if (error) {
        read.openErrors.push({
          turn: Number(error[1]),
          ...(error[2] ? { id: error[2] } : {}),
          call: error[3]!,
          status: error[4]!,
          lines: [],
        });
      } else if (line.startsWith(ERROR_DETAIL)) {
        read.openErrors.at(-1)?.lines.push(line.slice(ERROR_DETAIL.length));
      }
    }
  }
  return read;
}

/** The user's last message a continuation block quotes, when it quotes one. */
export function readContinuationLastUser(text: string): string | undefined {
  const block = continuationIn(text);
  const quoted = block ? /<last-user-message>\n([\s\S]*?)\n<\/last-user-message>/.exec(block) : null;
  return quoted ? unescapeTags(quoted[1]!) : undefined;
}

/** A line that counts earlier items: how many, and the ids it names (the "…" between the first and last few left out). */
function countedIds(match: RegExpExecArray): { count: number; ids: string[] } {
  return { count: Number(match[1]), ids: match[2] ? match[2].split(", ").filter((id) => id !== "…") : [] };
}
