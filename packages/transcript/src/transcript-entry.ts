import { randomUUID } from "node:crypto";
import type { Attachment, Message } from "@unforget/core";

/** Version of the on-disk transcript entry format. Readers accept this version and older. */
export const TRANSCRIPT_FORMAT_VERSION = 1 as const;

interface EntryBase {
  /** Format version of this line. */
  v: typeof TRANSCRIPT_FORMAT_VERSION;
  /** Unique id of the entry (for message entries, the message id). */
  id: string;
  /** ISO-8601 time the entry was appended. */
  timestamp: string;
  /** Session the entry belongs to, when the writer knows it. */
  sessionId?: string;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: Message;
}

export type CompactTrigger = "manual" | "auto" | "reactive";

/** Everything before the last boundary is history; the live context starts after it. */
export interface CompactBoundaryEntry extends EntryBase {
  type: "compact_boundary";
  trigger: CompactTrigger;
  /** Which layer produced the boundary (e.g. "summary", "session-memory", "provider"). */
  layer?: string;
  tokensBefore: number;
  tokensAfter?: number;
  messagesSummarized: number;
  /** Id of the last message before the boundary: the logical parent of what follows. */
  logicalParentId: string | null;
  /** Tools discovered before the compaction, so deferred tool lists survive it. */
  discoveredTools?: string[];
  /** Messages kept verbatim across the boundary (anchor and ids), when a keep-window was used. */
  preservedSegment?: { anchorId: string; messageIds: string[] };
}

export interface SummaryEntry extends EntryBase {
  type: "summary";
  /** "compact": the summary that replaces history after a boundary; "title": a session title. */
  kind: "compact" | "title";
  text: string;
  /** The boundary this summary belongs to (kind "compact"). */
  boundaryId?: string;
  /** The last message the summary covers. */
  leafId?: string;
  /** Which summariser wrote it (kind "compact"): "model", "extractive" (the offline one), "session-memory", … */
  summarizer?: string;
  /**
   * Set when the fallback summariser wrote it instead of the session's: "paused" (the session's summariser
   * failed too often in a row and rests) or "blocking-limit" (written at once at the blocking limit).
   */
  fallback?: string;
}

export interface AttachmentEntry extends EntryBase {
  type: "attachment";
  attachment: Attachment;
}

/**
 * One edit a context layer made to the projection. The transcript keeps the original content; replaying
 * edits reproduces the exact context after resume.
 */
export interface LayerEdit {
  /** What was done: "clear_tool_result", "persist_tool_result", "snip", "collapse", … */
  kind: string;
  messageIds?: string[];
  toolUseIds?: string[];
  /** Layer-specific details (placeholder text, file path, preview length, …). */
  details?: Record<string, unknown>;
}

/** Replaces what the model sees of one tool_result (cleared, persisted to disk, truncated, masked). */
export interface ReplaceToolResultEdit extends LayerEdit {
  kind: "replace_tool_result";
  /** The tool_use id whose result is replaced (exactly one). */
  toolUseIds: [string];
  details: {
    /** The text the model sees instead of the original result. */
    content: string;
    /** Why: "cleared", "persisted", "truncated", "masked", … */
    reason: string;
    [key: string]: unknown;
  };
}

/** Replaces what the model sees of one whole message (an observation message cleared or masked). */
export interface ReplaceMessageEdit extends LayerEdit {
  kind: "replace_message";
  /** The message whose text is replaced (exactly one). */
  messageIds: [string];
  details: { content: string; reason: string; [key: string]: unknown };
}

/**
 * Removes a run of messages from the projection (snip, collapse) and, when `replacement` is set, puts one
 * message in their place, at the position of the first removed message that is still projected.
 */
export interface ReplaceMessagesEdit extends LayerEdit {
  kind: "replace_messages";
  messageIds: string[];
  details: {
    replacement?: { id: string; role: "user" | "assistant"; text: string };
    reason: string;
    [key: string]: unknown;
  };
}

/** The edits the projection knows how to apply; other kinds are kept in the transcript and ignored. */
export type ContextEdit = ReplaceToolResultEdit | ReplaceMessageEdit | ReplaceMessagesEdit;

export interface LayerDecisionEntry extends EntryBase {
  type: "layer_decision";
  /** The layer that decided ("tool-result-budget", "snip", "microcompact", …). */
  layer: string;
  edits: LayerEdit[];
  tokensBefore?: number;
  tokensAfter?: number;
  reason?: string;
}

export interface HookResultEntry extends EntryBase {
  type: "hook_result";
  /** Hook event name ("PreCompact", "SessionStart", …). */
  event: string;
  /** Plugin name or command that ran. */
  handler: string;
  outcome: "success" | "blocked" | "error" | "timeout";
  /** Text the hook contributed (instructions, additional context). */
  output?: string;
  reason?: string;
  exitCode?: number;
  durationMs?: number;
}

/** Session metadata; re-appended after each compaction so a reader of the tail still finds it. */
export interface MetadataEntry extends EntryBase {
  type: "metadata";
  title?: string;
  tags?: string[];
  data?: Record<string, unknown>;
}

/**
 * A message pinned or unpinned by the user or a plugin: the compaction layers never clear, fold, snip or summarise
 * a pinned message (within the manager's cap). Append-only: the last entry for a message wins.
 */
export interface PinEntry extends EntryBase {
  type: "pin";
  /** The messages pinned or unpinned (the ids of the messages as they were appended). */
  messageIds: string[];
  /** True to pin, false to unpin. */
  pinned: boolean;
  /** Who asked: "user", a plugin's name, … */
  by?: string;
}

export type TranscriptEntry =
  | MessageEntry
  | PinEntry
  | CompactBoundaryEntry
  | SummaryEntry
  | AttachmentEntry
  | LayerDecisionEntry
  | HookResultEntry
  | MetadataEntry;

export type TranscriptEntryType = TranscriptEntry["type"];

type WithoutEnvelope<Entry> = Entry extends TranscriptEntry
  ? Omit<Entry, "v" | "id" | "timestamp" | "sessionId"> &
      Partial<Pick<Entry, "v" | "id" | "timestamp" | "sessionId">>
  : never;

/** An entry as a caller hands it to the writer: `v`, `id`, `timestamp` and `sessionId` may be omitted. */
export type TranscriptEntryInput = WithoutEnvelope<TranscriptEntry>;

export interface CreateTranscriptEntryDefaults {
  /** Session id to fill in when the entry has none. */
  sessionId?: string;
  /** Time to use when the entry has none (default: now). */
  now?: Date;
}

/**
 * Completes an entry: fills `v`, `id` (a message entry takes its message's id), `timestamp` and `sessionId`
 * when the caller left them out. Fields the caller set are kept.
 */
export function createTranscriptEntry(
  input: TranscriptEntryInput,
  defaults: CreateTranscriptEntryDefaults = {},
): TranscriptEntry {
  const id = input.id ?? (input.type === "message" ? input.message.id : `${input.type}_${randomUUID()}`);
  const entry = {
    ...input,
    v: input.v ?? TRANSCRIPT_FORMAT_VERSION,
    id,
    timestamp: input.timestamp ?? (defaults.now ?? new Date()).toISOString(),
  } as TranscriptEntry;
  const sessionId = input.sessionId ?? defaults.sessionId;
  if (sessionId !== undefined) entry.sessionId = sessionId;
  return entry;
}
