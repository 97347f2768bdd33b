import { isRecord } from "../shared/is-record.ts";
import { isCutOffJson } from "./json-cut-off.ts";

/**
 * The session formats `importSessionText` and `importSessionFile` recognise. `openhands-evaluation` is
 * OpenHands evaluation (or resolver) output: JSONL with one run per line.
 */
export type SessionFormat =
  | "claude-code"
  | "swe-agent"
  | "mini-swe-agent"
  | "openhands"
  | "openhands-evaluation"
  | "unforget";

/** A format that was tried on a source, and why the source did not fit it. */
export interface SessionFormatAttempt {
  format: SessionFormat;
  /** What the format needs and what was found instead, in one sentence. */
  reason: string;
}

/** What detection found: the format, and the parsed document when the text is one JSON value. */
export type DetectedFormat =
  | { format: SessionFormat; document: unknown; attempts?: undefined }
  | { format?: undefined; document?: undefined; attempts: SessionFormatAttempt[] };

/** What each format needs, as the first half of the reason it did not fit. */
const EXPECTS: Readonly<Record<SessionFormat, string>> = {
  "claude-code":
    "JSONL lines (or a JSON array / `{ loglines }`) with a Claude Code `type` (user, assistant, summary, …) and a `message`, `summary` or `uuid`",
  unforget: "JSONL entries with a numeric `v`, an entry `type` and an `id`",
  "swe-agent": "a JSON object with a `history` of chat messages (`role`) or a `trajectory` of steps",
  "mini-swe-agent": "a JSON array of chat messages (`role`), or an object with a `messages` array",
  openhands: "a JSON array (or a `history` / `trajectory`) of events with an `action` or `observation`",
  "openhands-evaluation": "JSONL whose lines are runs with a `history` of OpenHands events",
};

const ORDER: readonly SessionFormat[] = [
  "claude-code",
  "unforget",
  "swe-agent",
  "mini-swe-agent",
  "openhands",
  "openhands-evaluation",
];

type RecordKind =
  | "unforget-entry"
  | "claude-code-line"
  | "chat-message"
  | "openhands-event"
  | "swe-agent-step";

const CLAUDE_CODE_TYPES: ReadonlySet<string> = new Set([
  "user",
  "assistant",
  "system",
  "summary",
  "attachment",
  "progress",
  "file-history-snapshot",
  "queue-operation",
]);
const CHAT_ROLES: ReadonlySet<string> = new Set([
  "system",
  "developer",
  "user",
  "assistant",
  "tool",
  "function",
]);
/** How many items (JSONL lines, array elements) detection looks at: the first ones decide. */
const SAMPLE = 5;

/** What one record of a source looks like. */
function kindOf(value: Record<string, unknown>): RecordKind | undefined {
  const { type } = value;
  // Only Unforget entries carry a numeric format version; which types a version knows is the reader's business.
  if (typeof value.v === "number" && typeof type === "string" && typeof value.id === "string")
    return "unforget-entry";
  if (
    typeof type === "string" &&
    CLAUDE_CODE_TYPES.has(type) &&
    (isRecord(value.message) || typeof value.summary === "string" || "uuid" in value || "sessionId" in value)
  )
    return "claude-code-line";
  if (typeof value.role === "string" && CHAT_ROLES.has(value.role)) return "chat-message";
  const action = typeof value.action === "string";
  const observation = typeof value.observation === "string";
  // A SWE-agent step holds a command and its output together; an OpenHands event is one or the other.
  if ((action && observation) || typeof value.response === "string") return "swe-agent-step";
  if (action || observation) return "openhands-event";
  return undefined;
}

/** The kind of the first records of a list (the first one that has a kind decides). */
function kindOfList(list: unknown): RecordKind | undefined {
  if (!Array.isArray(list)) return undefined;
  let checked = 0;
  for (const item of list) {
    if (!isRecord(item)) continue;
    const kind = kindOf(item);
    if (kind !== undefined) return kind;
    if (++checked >= SAMPLE) break;
  }
  return undefined;
}

/** The format of a JSON document (the whole text is one JSON value), or undefined. */
function formatOfDocument(value: unknown): SessionFormat | undefined {
  if (Array.isArray(value)) {
    const kind = kindOfList(value);
    if (kind === "claude-code-line") return "claude-code";
    if (kind === "chat-message") return "mini-swe-agent";
    if (kind === "openhands-event") return "openhands";
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  // A JSONL file of one line is also one JSON document.
  const own = kindOf(value);
  if (own === "unforget-entry") return "unforget";
  if (own === "claude-code-line") return "claude-code";
  if (kindOfList(value.loglines) === "claude-code-line") return "claude-code";
  const history = kindOfList(value.history);
  if (history === "chat-message") return "swe-agent";
  if (history === "openhands-event") {
    return "instance_id" in value || "issue" in value ? "openhands-evaluation" : "openhands";
  }
  const trajectory = kindOfList(value.trajectory);
  if (trajectory === "swe-agent-step") return "swe-agent";
  if (trajectory === "openhands-event") return "openhands";
  if (kindOfList(value.messages) === "chat-message") return "mini-swe-agent";
  return undefined;
}

/** The format of JSONL text from its first object lines, or undefined. */
function formatOfLines(objects: Record<string, unknown>[]): SessionFormat | undefined {
  for (const value of objects) {
    const kind = kindOf(value);
    if (kind === "unforget-entry") return "unforget";
    if (kind === "claude-code-line") return "claude-code";
    if (kindOfList(value.history) === "openhands-event" || kindOfList(value.trajectory) === "openhands-event")
      return "openhands-evaluation";
  }
  return undefined;
}

/**
 * Recognises a session format by content, never by file name: the whole text as one JSON document (SWE-agent,
 * mini-swe-agent, OpenHands, a Claude Code export), else its first JSONL lines (Claude Code, Unforget,
 * OpenHands evaluation output). When nothing fits, every format is listed with the reason it did not.
 */
export function detectSessionFormat(text: string): DetectedFormat {
  let documentError: string | undefined;
  if (/^\s*[[{]/.test(text)) {
    try {
      const document: unknown = JSON.parse(text);
      const format = formatOfDocument(document);
      if (format !== undefined) return { format, document };
      return { attempts: attemptsFor(`the text is ${describeValue(document)}`) };
    } catch (error) {
      documentError = error instanceof Error ? error.message : String(error);
    }
  }
  const { objects, firstLine } = sampleLines(text);
  const format = formatOfLines(objects);
  if (format !== undefined) return { format, document: undefined };
  const asDocument =
    documentError === undefined
      ? ""
      : isCutOffJson(text)
        ? `the text starts like a JSON document but ends early (${documentError}): the file may be cut off; `
        : `the text is not one JSON document (${documentError}); `;
  const asLines =
    objects.length > 0
      ? `its first JSON line is ${describeValue(objects[0])}`
      : `no line is a JSON object (line 1 starts ${JSON.stringify(firstLine.slice(0, 40))})`;
  return { attempts: attemptsFor(`${asDocument}${asLines}`) };
}

function attemptsFor(found: string): SessionFormatAttempt[] {
  return ORDER.map((format) => ({ format, reason: `expects ${EXPECTS[format]}; ${found}.` }));
}

/** The first JSON object lines of JSONL text (up to `SAMPLE`), and the first non-blank line. */
function sampleLines(text: string): { objects: Record<string, unknown>[]; firstLine: string } {
  const objects: Record<string, unknown>[] = [];
  let firstLine: string | undefined;
  let start = 0;
  let examined = 0;
  while (start < text.length && objects.length < SAMPLE && examined < SAMPLE * 4) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end === -1 ? text.length : end).trim();
    start = end === -1 ? text.length : end + 1;
    if (line.length === 0) continue;
    firstLine ??= line;
    examined++;
    if (!line.startsWith("{")) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) objects.push(value);
    } catch {
      // A line that is not JSON (a torn line, a pretty-printed document's line) decides nothing.
    }
  }
  return { objects, firstLine: firstLine ?? "" };
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) {
    const first = value.find(isRecord);
    return first === undefined
      ? `a JSON array of ${value.length} item(s), none an object`
      : `a JSON array whose first object has the keys ${keysOf(first)}`;
  }
  if (isRecord(value)) return `a JSON object with the keys ${keysOf(value)}`;
  return `a JSON ${value === null ? "null" : typeof value}`;
}

function keysOf(value: Record<string, unknown>): string {
  const keys = Object.keys(value);
  if (keys.length === 0) return "(none)";
  return keys.length <= 8 ? keys.join(", ") : `${keys.slice(0, 8).join(", ")}, … (${keys.length} in all)`;
}
