import { type ContentBlock, type Message, normalizeContent } from "@unforget/core";
import type { TranscriptEntry } from "./transcript-entry.ts";
import { TRANSCRIPT_FORMAT_VERSION } from "./transcript-entry.ts";
import { TranscriptCorruptError } from "./transcript-errors.ts";

/**
 * What was wrong with one line of a transcript.
 * - `torn_line`: the last line has no newline and is not a valid entry: a crash interrupted its write.
 * - `invalid_json`: a complete line that is not JSON (or not a JSON object).
 * - `invalid_entry`: JSON that is not a valid entry of a type this version knows.
 * - `unknown_entry`: a well-formed entry of an unknown `type` or a newer `v`, written by a newer version. It is
 *   kept in `unknownEntries` (never dropped, never quarantined) and reported here for information.
 */
export type TranscriptProblemKind = "torn_line" | "invalid_json" | "invalid_entry" | "unknown_entry";

export interface TranscriptProblem {
  kind: TranscriptProblemKind;
  /** 1-based line number in the file. */
  line: number;
  /** Why the line was not accepted as an entry, in one sentence. */
  reason: string;
  /** The line exactly as read (without its newline). */
  raw: string;
}

/** An entry this version does not understand, kept verbatim so that a rewrite or export loses nothing. */
export interface UnknownTranscriptEntry {
  /** 1-based line number in the file. */
  line: number;
  /** The entry's `type` field. */
  type: string;
  /** The entry's `v` field (may be newer than `TRANSCRIPT_FORMAT_VERSION`). */
  v: number;
  /** The parsed line, untouched. */
  value: Record<string, unknown>;
}

export interface ParsedTranscript {
  /** Valid entries in file order. */
  entries: TranscriptEntry[];
  /** Entries from a newer writer (unknown type or newer `v`), in file order. */
  unknownEntries: UnknownTranscriptEntry[];
  /** Every line that is not in `entries`, with its line number and the reason; blank lines are ignored. */
  problems: TranscriptProblem[];
}

/**
 * Parses JSONL transcript text. Never drops a line silently: every line that is not a valid entry appears in
 * `problems`. Throws `TranscriptCorruptError` only when the text is not JSONL at all (no line is a JSON
 * object although complete lines exist).
 */
export function parseTranscript(text: string, options: { path?: string } = {}): ParsedTranscript {
  const result: ParsedTranscript = { entries: [], unknownEntries: [], problems: [] };
  const endsWithNewline = text.length === 0 || text.endsWith("\n");
  const lines = text.split("\n");
  if (endsWithNewline) lines.pop();
  let objectLines = 0;
  let completeLines = 0;
  lines.forEach((rawLine, index) => {
    const isLastUnterminated = !endsWithNewline && index === lines.length - 1;
    const parsed = parseTranscriptLine(rawLine, index + 1, isLastUnterminated);
    if (parsed === undefined) return;
    if (!isLastUnterminated) completeLines++;
    if (parsed.isObject) objectLines++;
    if (parsed.entry !== undefined) result.entries.push(parsed.entry);
    if (parsed.unknownEntry !== undefined) result.unknownEntries.push(parsed.unknownEntry);
    if (parsed.problem !== undefined) result.problems.push(parsed.problem);
  });
  if (objectLines === 0 && completeLines > 0) {
    throw notTranscriptError(options.path, completeLines, result.problems[0]);
  }
  return result;
}

/** The error for text in which no complete line is a JSON object: it is not a transcript at all. */
export function notTranscriptError(
  path: string | undefined,
  completeLines: number,
  first: TranscriptProblem | undefined,
): TranscriptCorruptError {
  return new TranscriptCorruptError(
    `${path ?? "The transcript"} is not a JSONL transcript: none of its ${completeLines} line(s) is a JSON object` +
      `${first ? ` (line ${first.line}: ${first.reason})` : ""}. Check that the path points to a transcript file.`,
    {
      ...(path === undefined ? {} : { path }),
      ...(first ? { line: first.line } : {}),
    },
  );
}

/** What one transcript line holds: an entry, or a problem (with the kept unknown entry for `unknown_entry`). */
export interface ParsedTranscriptLine {
  entry?: TranscriptEntry;
  problem?: TranscriptProblem;
  unknownEntry?: UnknownTranscriptEntry;
  /** Whether the line is a JSON object (a file where no line is one is not a transcript). */
  isObject: boolean;
}

/**
 * Parses one line (without its newline; a trailing `\r` is ignored). `isLastUnterminated` marks the file's
 * last line when no newline follows it: if it is not valid, it is a `torn_line`. Returns undefined for a blank
 * line. `parseTranscript` and `streamTranscript` share it, so both read a line the same way.
 */
export function parseTranscriptLine(
  rawLine: string,
  line: number,
  isLastUnterminated: boolean,
): ParsedTranscriptLine | undefined {
  const raw = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
  if (raw.trim().length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return {
      isObject: false,
      problem: isLastUnterminated
        ? {
            kind: "torn_line",
            line,
            reason: `The last line ends without a newline and is not valid JSON (${detail}): a write was interrupted.`,
            raw,
          }
        : { kind: "invalid_json", line, reason: `The line is not valid JSON (${detail}).`, raw },
    };
  }
  if (!isRecord(value)) {
    return {
      isObject: false,
      problem: {
        kind: isLastUnterminated ? "torn_line" : "invalid_json",
        line,
        reason: `The line is JSON but not an object (got ${Array.isArray(value) ? "an array" : typeof value}).`,
        raw,
      },
    };
  }
  if (hasManyBrackets(raw, MAX_NESTING) && nestsDeeperThan(value, MAX_NESTING)) {
    return {
      isObject: true,
      problem: {
        kind: "invalid_entry",
        line,
        reason: `The line nests values more than ${MAX_NESTING} levels deep: no writer produces that, and it could not be written back.`,
        raw,
      },
    };
  }
  const checked = checkTranscriptEntry(value);
  if (checked.kind === "entry") return { isObject: true, entry: checked.entry };
  if (checked.kind === "unknown") {
    return {
      isObject: true,
      unknownEntry: { line, type: String(value.type), v: Number(value.v), value },
      problem: { kind: "unknown_entry", line, reason: checked.reason, raw },
    };
  }
  return { isObject: true, problem: { kind: "invalid_entry", line, reason: checked.reason, raw } };
}

export type TranscriptEntryCheck =
  | { kind: "entry"; entry: TranscriptEntry }
  | { kind: "unknown"; reason: string }
  | { kind: "invalid"; reason: string };

const ENTRY_TYPES: ReadonlySet<string> = new Set([
  "message",
  "compact_boundary",
  "summary",
  "attachment",
  "layer_decision",
  "hook_result",
  "metadata",
  "pin",
]);
const COMPACT_TRIGGERS: ReadonlySet<string> = new Set(["manual", "auto", "reactive"]);
const HOOK_OUTCOMES: ReadonlySet<string> = new Set(["success", "blocked", "error", "timeout"]);

/**
 * Validates one parsed line as a transcript entry. Message content is normalised with `normalizeContent`
 * (string content becomes a text block; unknown blocks are preserved as `UnknownBlock`).
 */
export function checkTranscriptEntry(value: Record<string, unknown>): TranscriptEntryCheck {
  const { v, type, id, timestamp } = value;
  if (typeof type !== "string") return { kind: "invalid", reason: "The entry has no string `type` field." };
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    return { kind: "invalid", reason: "The entry has no valid format version `v` (a positive integer)." };
  }
  if (v > TRANSCRIPT_FORMAT_VERSION) {
    return {
      kind: "unknown",
      reason: `The entry has format version ${v}, newer than ${TRANSCRIPT_FORMAT_VERSION}; it was kept unread. Upgrade @unforget/core to use it.`,
    };
  }
  if (!ENTRY_TYPES.has(type)) {
    return {
      kind: "unknown",
      reason: `The entry type "${type}" is unknown to this version; it was kept unread. Upgrade @unforget/core to use it.`,
    };
  }
  if (typeof id !== "string" || id.length === 0)
    return { kind: "invalid", reason: "The entry has no string `id`." };
  if (typeof timestamp !== "string")
    return { kind: "invalid", reason: "The entry has no string `timestamp`." };
  if (value.sessionId !== undefined && typeof value.sessionId !== "string") {
    return { kind: "invalid", reason: "The entry's `sessionId` is not a string." };
  }
  const reason = checkTypeFields(type, value);
  if (reason !== undefined) return { kind: "invalid", reason };
  return { kind: "entry", entry: normaliseEntry(type, value) };
}

function checkTypeFields(type: string, value: Record<string, unknown>): string | undefined {
  switch (type) {
    case "message":
      return checkMessage(value.message);
    case "compact_boundary":
      if (typeof value.trigger !== "string" || !COMPACT_TRIGGERS.has(value.trigger)) {
        return "The compact_boundary's `trigger` is not one of manual, auto, reactive.";
      }
      if (typeof value.tokensBefore !== "number")
        return "The compact_boundary has no numeric `tokensBefore`.";
      if (typeof value.messagesSummarized !== "number") {
        return "The compact_boundary has no numeric `messagesSummarized`.";
      }
      if (value.logicalParentId !== null && typeof value.logicalParentId !== "string") {
        return "The compact_boundary's `logicalParentId` is neither a string nor null.";
      }
      return undefined;
    case "summary":
      if (value.kind !== "compact" && value.kind !== "title")
        return "The summary's `kind` is not compact or title.";
      if (typeof value.text !== "string") return "The summary has no string `text`.";
      if (value.summarizer !== undefined && typeof value.summarizer !== "string")
        return "The summary's `summarizer` is not a string.";
      if (value.fallback !== undefined && typeof value.fallback !== "string")
        return "The summary's `fallback` is not a string.";
      return undefined;
    case "attachment": {
      const attachment = value.attachment;
      if (!isRecord(attachment) || typeof attachment.kind !== "string") {
        return "The attachment entry has no `attachment` object with a string `kind`.";
      }
      if (typeof attachment.content !== "string" && !Array.isArray(attachment.content)) {
        return "The attachment's `content` is neither a string nor a block array.";
      }
      return undefined;
    }
    case "layer_decision":
      if (typeof value.layer !== "string") return "The layer_decision has no string `layer`.";
      if (
        !Array.isArray(value.edits) ||
        !value.edits.every((edit) => isRecord(edit) && typeof edit.kind === "string")
      ) {
        return "The layer_decision's `edits` is not an array of objects with a string `kind`.";
      }
      return undefined;
    case "hook_result":
      if (typeof value.event !== "string" || typeof value.handler !== "string") {
        return "The hook_result has no string `event` and `handler`.";
      }
      if (typeof value.outcome !== "string" || !HOOK_OUTCOMES.has(value.outcome)) {
        return "The hook_result's `outcome` is not one of success, blocked, error, timeout.";
      }
      return undefined;
    case "pin":
      if (!Array.isArray(value.messageIds) || !value.messageIds.every((id) => typeof id === "string")) {
        return "The pin entry's `messageIds` is not an array of strings.";
      }
      if (typeof value.pinned !== "boolean") return "The pin entry has no boolean `pinned`.";
      return undefined;
    default:
      return undefined;
  }
}

function checkMessage(message: unknown): string | undefined {
  if (!isRecord(message)) return "The message entry has no `message` object.";
  if (typeof message.id !== "string" || message.id.length === 0) return "The message has no string `id`.";
  if (message.role !== "user" && message.role !== "assistant")
    return "The message's `role` is not user or assistant.";
  const content = message.content;
  if (typeof content !== "string" && !Array.isArray(content)) {
    return "The message's `content` is neither a string nor a block array.";
  }
  if (message.timestamp !== undefined && typeof message.timestamp !== "string") {
    return "The message's `timestamp` is not a string.";
  }
  return undefined;
}

function normaliseEntry(type: string, value: Record<string, unknown>): TranscriptEntry {
  if (type === "message") {
    const message = value.message as Record<string, unknown>;
    const normalised = {
      ...message,
      content: normalizeContent(message.content),
      timestamp: typeof message.timestamp === "string" ? message.timestamp : (value.timestamp as string),
    } as unknown as Message;
    return { ...value, message: normalised } as unknown as TranscriptEntry;
  }
  if (type === "attachment") {
    const attachment = value.attachment as Record<string, unknown>;
    if (Array.isArray(attachment.content)) {
      const content: ContentBlock[] = normalizeContent(attachment.content);
      return { ...value, attachment: { ...attachment, content } } as unknown as TranscriptEntry;
    }
  }
  return value as unknown as TranscriptEntry;
}

/**
 * The deepest nesting of arrays and objects a transcript line may have. Serialising recurses
 * (`JSON.stringify` overflows the stack at a few thousand levels), so a deeper entry could be read but never
 * written back or sent; real entries stay below 30 levels.
 */
const MAX_NESTING = 256;

/**
 * A cheap first test: a line nested deeper than `limit` has more than `limit` opening brackets. Counting them
 * with `indexOf` costs far less than walking the parsed value, which only lines that pass this test get.
 */
function hasManyBrackets(raw: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ["[", "{"]) {
    for (let at = raw.indexOf(bracket); at !== -1; at = raw.indexOf(bracket, at + 1)) {
      if (++count > limit) return true;
    }
  }
  return false;
}

/** Whether a parsed JSON value nests deeper than `limit`; iterative, so depth itself cannot overflow it. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (typeof current.value !== "object" || current.value === null) continue;
    if (current.depth > limit) return true;
    for (const child of Array.isArray(current.value) ? current.value : Object.values(current.value)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: current.depth + 1 });
    }
  }
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
