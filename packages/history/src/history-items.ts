import type { ContentBlock, Message, ToolResultBlock } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";

/**
 * What a history item is: a user's or the assistant's text, a tool call with its result (id: the tool_use id,
 * the one compaction's markers name), or a compaction summary.
 */
export type HistoryItemKind = "user" | "assistant" | "tool" | "summary";

/** Where an item's bytes are: one transcript line (`start`–`end`, bytes) and the block in its message. */
export interface ItemLocation {
  /** Index of the transcript (the session's own is 0; sub-agents follow). */
  source: number;
  start: number;
  end: number;
  /** The content block's index in the line's message; -1 for a summary entry. */
  part: number;
}

/** What the index keeps of an item: where to read it and what the filters match; never its text. */
export interface ItemRecord {
  id: string;
  kind: HistoryItemKind;
  turn: number;
  tool?: string;
  /** The sub-agent whose transcript holds it (its session id); absent for the session's own items. */
  agent?: string;
  isError?: boolean;
  /** A text block of a message the user wrote (not a note of the system, a summary or an observation). */
  authored?: true;
  at: ItemLocation;
  /** A tool item's call (the tool_use block). */
  call?: ItemLocation;
  /** A tool item's input as JSON, cut to `SUBJECT_CHARS`: what the path filter matches. */
  subject?: string;
}

/** A document handed to the search index. */
export interface ItemDocument {
  id: string;
  call: string;
  text: string;
}

/** The characters of a tool call's input kept for the path filter (paths and commands are short). */
const SUBJECT_CHARS = 500;

/** A tool call seen without its result yet. */
interface PendingCall {
  tool: string;
  turn: number;
  at: ItemLocation;
  input: string;
}

/** Per-transcript state of the extraction: the turn reached and the calls still waiting for a result. */
export interface ExtractionState {
  turn: number;
  pending: Map<string, PendingCall>;
  /** A sub-agent's transcript: its session id. */
  agent?: string;
  /** A sub-agent's items take the turn of the parent's call that started it, once its transcript names that call. */
  parentTurn?: number;
}

/** Called with each item found, its record and what to index. */
export type ItemSink = (record: ItemRecord, document: ItemDocument) => void;

/** A user message that is the user's words (a new turn), not tool results, a summary or a note of the system. */
function isUserPrompt(message: Message): boolean {
  if (message.role !== "user" || message.isMeta || message.isCompactSummary || message.isObservation)
    return false;
  return (
    message.content.some((block) => block.type === "text") &&
    !message.content.some((b) => b.type === "tool_result")
  );
}

/** The text of a tool result as the tool returned it: the string itself, or its text blocks joined by newlines. */
export function resultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return block.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

/** The original text of one block of a message (what `read` returns for its item). */
export function blockText(block: ContentBlock | undefined): string | undefined {
  if (block === undefined) return undefined;
  if (block.type === "text") return block.text;
  if (block.type === "tool_result") return resultText(block);
  if (block.type === "tool_use") return JSON.stringify(block.input ?? null);
  return undefined;
}

/**
 * Turns one transcript entry into history items: each text block of a message, each tool call once its result
 * is there, each compaction summary. Tools in `skipTools` (the history tools themselves) are left out, so that
 * a restored result is never found again as an item of its own.
 */
export function extractItems(
  entry: TranscriptEntry,
  at: Omit<ItemLocation, "part">,
  state: ExtractionState,
  skipTools: ReadonlySet<string>,
  sink: ItemSink,
): void {
  if (entry.type === "summary") {
    if (entry.kind !== "compact") return;
    sink(withAgent({ id: entry.id, kind: "summary", turn: state.turn, at: { ...at, part: -1 } }, state), {
      id: entry.id,
      call: "",
      text: entry.text,
    });
    return;
  }
  if (entry.type !== "message") return;
  const message = entry.message;
  if (message.isCompactSummary) return;
  if (isUserPrompt(message)) state.turn++;
  message.content.forEach((block, part) => {
    const location = { ...at, part };
    if (block.type === "text") {
      if (block.text.trim() === "") return;
      const id = `${message.id}:${part}`;
      const kind = message.role === "user" ? "user" : "assistant";
      const record: ItemRecord = { id, kind, turn: state.turn, at: location };
      if (kind === "user" && !message.isMeta && !message.isObservation) record.authored = true;
      sink(withAgent(record, state), {
        id,
        call: "",
        text: block.text,
      });
    } else if (block.type === "tool_use") {
      if (skipTools.has(block.name)) return;
      const input = JSON.stringify(block.input ?? null);
      state.pending.set(block.id, { tool: block.name, turn: state.turn, at: location, input });
    } else if (block.type === "tool_result") {
      const call = state.pending.get(block.tool_use_id);
      if (call === undefined) return;
      state.pending.delete(block.tool_use_id);
      const record: ItemRecord = {
        id: block.tool_use_id,
        kind: "tool",
        turn: call.turn,
        tool: call.tool,
        at: location,
        call: call.at,
        subject: call.input.slice(0, SUBJECT_CHARS),
      };
      if (block.is_error) record.isError = true;
      sink(withAgent(record, state), {
        id: block.tool_use_id,
        call: `${call.tool} ${call.input}`,
        text: resultText(block),
      });
    }
  });
}

function withAgent(record: ItemRecord, state: ExtractionState): ItemRecord {
  if (state.agent !== undefined) record.agent = state.agent;
  if (state.parentTurn !== undefined) record.turn = state.parentTurn;
  return record;
}
