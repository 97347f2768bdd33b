import {
  type ContentBlock,
  contentBlocks,
  createMessage,
  LEADING_USER_TEXT,
  type Message,
  type RequestMessage,
  type ToolResultBlock,
} from "@unforget/core";
import type {
  AttachmentEntry,
  CompactBoundaryEntry,
  ContextEdit,
  LayerEdit,
  SummaryEntry,
  TranscriptEntry,
} from "./transcript-entry.ts";

/** What a resuming reader gets from a transcript: the context exactly as the live session last sent it. */
export interface ProjectedContext {
  /** The projected messages in order, one per transcript message, summary or attachment (not merged). */
  messages: Message[];
  /** The last compact boundary, when there is one. */
  boundary?: CompactBoundaryEntry;
  /** The compact summary of that boundary, when it was written as a `summary` entry. */
  summary?: SummaryEntry;
}

/** A layer edit with the time it was recorded (replacement messages take that time). */
export interface TimedLayerEdit {
  edit: LayerEdit;
  timestamp: string;
}

/**
 * The context the model sees, computed from the transcript alone, without running any layer:
 * - after the last compact boundary: the summary, the messages the boundary preserved (by id, from before it),
 *   then every message and attachment appended after it, in order;
 * - without a boundary: every message and attachment;
 * - then every recorded layer edit applied in order (removed or replaced runs, replaced tool results and
 *   observation messages), whichever boundary it was recorded under.
 * Deterministic: the same entries give the same messages in any process, so a resumed session sends the
 * byte-identical request (and keeps its prompt-cache prefix). Linear in the entries plus the removal edits.
 */
export function projectContext(entries: readonly TranscriptEntry[]): ProjectedContext {
  let boundaryIndex = -1;
  for (let index = entries.length - 1; index >= 0; index--) {
    if (entries[index]?.type === "compact_boundary") {
      boundaryIndex = index;
      break;
    }
  }
  const boundary =
    boundaryIndex >= 0 ? (entries[boundaryIndex] as CompactBoundaryEntry) : (undefined as undefined);
  const edits: TimedLayerEdit[] = [];
  for (const entry of entries) {
    if (entry.type !== "layer_decision") continue;
    for (const edit of entry.edits) edits.push({ edit, timestamp: entry.timestamp });
  }

  const opening: Message[] = [];
  const rest: Message[] = [];
  let summary: SummaryEntry | undefined;
  let summaryMessage: Message | undefined;
  for (let index = boundaryIndex + 1; index < entries.length; index++) {
    const entry = entries[index]!;
    if (entry.type === "message") {
      if (boundary && summaryMessage === undefined && rest.length === 0 && entry.message.isCompactSummary) {
        summaryMessage = entry.message;
      } else {
        rest.push(entry.message);
      }
    } else if (entry.type === "attachment") {
      rest.push(attachmentMessage(entry));
    } else if (entry.type === "summary" && entry.kind === "compact" && boundary && summary === undefined) {
      if (entry.boundaryId === undefined || entry.boundaryId === boundary.id) summary = entry;
    }
  }
  if (boundary) {
    if (summaryMessage) opening.push(summaryMessage);
    else if (summary) opening.push(summaryAsMessage(summary));
    opening.push(...preservedMessages(entries, boundaryIndex, boundary));
  }
  const messages = applyLayerEdits(opening.length === 0 ? rest : [...opening, ...rest], edits);
  const projected: ProjectedContext = { messages };
  if (boundary) projected.boundary = boundary;
  if (summary) projected.summary = summary;
  return projected;
}

/** The projected messages of a transcript (`projectContext(entries).messages`). */
export function projectMessages(entries: readonly TranscriptEntry[]): Message[] {
  return projectContext(entries).messages;
}

/** The user message that carries a compact summary entry; its id and time are the entry's. */
export function summaryAsMessage(summary: SummaryEntry): Message {
  return createMessage("user", summary.text, {
    id: `${summary.id}_message`,
    timestamp: summary.timestamp,
    isMeta: true,
    isCompactSummary: true,
  });
}

/** The meta user message that carries an attachment; its id and time are the entry's. */
export function attachmentMessage(entry: AttachmentEntry): Message {
  const { attachment } = entry;
  const metadata: Record<string, unknown> = { attachment: attachment.kind };
  if (attachment.source !== undefined) metadata.attachmentSource = attachment.source;
  return createMessage("user", attachment.content, {
    id: entry.id,
    timestamp: entry.timestamp,
    isMeta: true,
    metadata,
  });
}

function preservedMessages(
  entries: readonly TranscriptEntry[],
  boundaryIndex: number,
  boundary: CompactBoundaryEntry,
): Message[] {
  const ids = boundary.preservedSegment?.messageIds;
  if (!ids || ids.length === 0) return [];
  const wanted = new Set(ids);
  const found = new Map<string, Message>();
  for (let index = 0; index < boundaryIndex; index++) {
    const entry = entries[index]!;
    if (entry.type === "message" && wanted.has(entry.message.id)) found.set(entry.message.id, entry.message);
  }
  const preserved: Message[] = [];
  for (const id of ids) {
    const message = found.get(id);
    if (message) preserved.push(message);
  }
  return preserved;
}

/** True for the edit kinds the projection applies. */
export function isContextEdit(edit: LayerEdit): edit is ContextEdit {
  switch (edit.kind) {
    case "replace_tool_result":
      return (
        edit.toolUseIds?.length === 1 &&
        typeof edit.details?.content === "string" &&
        typeof edit.toolUseIds[0] === "string"
      );
    case "replace_message":
      return edit.messageIds?.length === 1 && typeof edit.details?.content === "string";
    case "replace_messages":
      return Array.isArray(edit.messageIds);
    default:
      return false;
  }
}

/**
 * Applies recorded layer edits to a message list, in order, and returns a new list (inputs are never
 * mutated). Runs removed by `replace_messages` (and OpenHands' `forget_events`) go first, each in turn, so a
 * later edit can remove an earlier replacement; then each replaced tool result or message takes the content of
 * the last edit that named it. Edits naming ids that are not in the list change nothing.
 */
export function applyLayerEdits(messages: readonly Message[], edits: readonly TimedLayerEdit[]): Message[] {
  let current: Message[] = messages as Message[];
  const toolResults = new Map<string, string>();
  const replacedMessages = new Map<string, string>();
  for (const { edit, timestamp } of edits) {
    if (edit.kind === "forget_events" && edit.messageIds) {
      current = removeRun(current, edit.messageIds, undefined);
      continue;
    }
    if (!isContextEdit(edit)) continue;
    if (edit.kind === "replace_messages") {
      const replacement = edit.details?.replacement;
      current = removeRun(
        current,
        edit.messageIds,
        replacement
          ? createMessage(replacement.role, replacement.text, {
              id: replacement.id,
              timestamp,
              isMeta: true,
              metadata: { replaces: edit.messageIds.length, reason: edit.details.reason },
            })
          : undefined,
      );
    } else if (edit.kind === "replace_tool_result") {
      toolResults.set(edit.toolUseIds[0], edit.details.content);
    } else {
      replacedMessages.set(edit.messageIds[0], edit.details.content);
    }
  }
  if (toolResults.size === 0 && replacedMessages.size === 0) {
    return current === messages ? [...messages] : current;
  }
  return current.map((message) => replaceContent(message, toolResults, replacedMessages));
}

function removeRun(messages: Message[], ids: readonly string[], replacement: Message | undefined): Message[] {
  const removed = new Set(ids);
  const kept: Message[] = [];
  let inserted = false;
  for (const message of messages) {
    if (!removed.has(message.id)) {
      kept.push(message);
      continue;
    }
    if (!inserted && replacement) kept.push(replacement);
    inserted = true;
  }
  return inserted ? kept : messages;
}

function replaceContent(
  message: Message,
  toolResults: ReadonlyMap<string, string>,
  replacedMessages: ReadonlyMap<string, string>,
): Message {
  const replacedText = replacedMessages.get(message.id);
  if (replacedText !== undefined) return { ...message, content: [{ type: "text", text: replacedText }] };
  if (message.role !== "user" || toolResults.size === 0) return message;
  let changed = false;
  const content = message.content.map((block): ContentBlock => {
    if (block.type !== "tool_result") return block;
    const text = toolResults.get(block.tool_use_id);
    if (text === undefined) return block;
    changed = true;
    const replaced: ToolResultBlock = { type: "tool_result", tool_use_id: block.tool_use_id, content: text };
    if (block.is_error) replaced.is_error = true;
    if (block.cache_control) replaced.cache_control = block.cache_control;
    return replaced;
  });
  return changed ? { ...message, content } : message;
}

/**
 * The `messages` of a provider request from projected messages: consecutive messages of the same role are
 * merged into one (tool_result blocks first in a merged user message, as providers require), only `role` and
 * `content` are kept, and a conversation that opens with the assistant gets a short user message first.
 */
export function toRequestMessages(messages: readonly Message[]): RequestMessage[] {
  return extendRequestMessages([], messages);
}

/**
 * `toRequestMessages` of the projection plus `added`, given the request of the projection: linear in `added`
 * (the last message is replaced by a merged copy when `added` continues its role). Neither input is changed.
 */
export function extendRequestMessages(
  request: readonly RequestMessage[],
  added: readonly Message[],
): RequestMessage[] {
  const out = request.slice();
  for (const message of added) {
    if (message.content.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === message.role) {
      const before = contentBlocks(last.content);
      out[out.length - 1] = {
        role: last.role,
        content:
          message.role === "user" ? resultsFirst(before, message.content) : [...before, ...message.content],
      };
    } else {
      out.push({ role: message.role, content: message.content });
    }
  }
  if (out[0]?.role === "assistant") {
    out.unshift({ role: "user", content: [{ type: "text", text: LEADING_USER_TEXT }] });
  }
  return out;
}

function resultsFirst(before: readonly ContentBlock[], after: readonly ContentBlock[]): ContentBlock[] {
  const results: ContentBlock[] = [];
  const others: ContentBlock[] = [];
  for (const block of [...before, ...after]) (block.type === "tool_result" ? results : others).push(block);
  return [...results, ...others];
}
