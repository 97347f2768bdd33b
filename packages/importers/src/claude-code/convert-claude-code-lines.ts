import type { ContentBlock, Message } from "@unforget/core";
import { normalizeContent } from "@unforget/core";
import type { AttachmentEntry, CompactBoundaryEntry, CompactTrigger } from "@unforget/transcript";
import { TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";
import { appendAll } from "../shared/append-all.ts";
import { convertItem } from "../shared/guard-import.ts";
import type { ImportDraft, ImportLocation } from "../shared/import-result.ts";
import { reportProblem } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { EPOCH } from "../shared/source-timestamp.ts";
import { stopReasonFromSource, usageFromSource } from "../shared/source-usage.ts";
import { locationKey, parentOf, responseIdOf, type SourceLine, uuidOf } from "./claude-code-source-lines.ts";

/** What the conversion of the active lines keeps from one line to the next. */
interface ConversionState {
  draft: ImportDraft;
  usedIds: Set<string>;
  lastTimestamp: string | undefined;
  /**
   * Messages of the current segment, searched when a later line continues one (split response, parallel
   * results). Items go to the draft when created, so attachments between them keep their place.
   */
  built: Message[];
}

export function convertLines(lines: SourceLine[], draft: ImportDraft): void {
  const state: ConversionState = { draft, usedIds: new Set(), lastTimestamp: undefined, built: [] };
  for (const line of lines) convertItem(draft, line.location, () => convertLine(state, line));
}

function convertLine(state: ConversionState, line: SourceLine): void {
  const { draft } = state;
  const value = line.value;
  const timestamp = line.time ?? state.lastTimestamp ?? EPOCH;
  state.lastTimestamp = timestamp;
  if (value.type === "attachment") {
    draft.items.push({ kind: "entry", entry: attachmentEntry(line, timestamp, draft.sessionId) });
    return;
  }
  if (value.type === "system") {
    // A compact boundary ends the segment: no later line continues a message from before it.
    state.built = [];
    draft.items.push({ kind: "entry", entry: compactBoundaryEntry(line, timestamp) });
    return;
  }
  const source = value.message as Record<string, unknown>;
  const role = value.type === "assistant" ? "assistant" : "user";
  const content = normalizeContent(source.content);
  const responseId = role === "assistant" ? responseIdOf(line) : undefined;
  if (role === "assistant" && responseId !== undefined) {
    const target = findOpenResponse(state.built, responseId);
    if (target) {
      appendAll(target.content, content);
      absorb(target, source, line);
      draft.counts.mergedSourceItems++;
      return;
    }
  }
  const previous = state.built[state.built.length - 1];
  if (
    role === "user" &&
    previous?.role === "user" &&
    isToolResultsOnly(content) &&
    isToolResultsOnly(previous.content)
  ) {
    appendAll(previous.content, content);
    (previous.metadata!.sourceLines as ImportLocation[]).push(line.location);
    keepToolUseResult(previous, value, content);
    draft.counts.mergedSourceItems++;
    return;
  }
  const message: Message = {
    id: uniqueMessageId(state, line),
    role,
    content,
    timestamp,
    metadata: { source: line.location, sourceLines: [line.location] },
  };
  if (responseId !== undefined) message.responseId = responseId;
  if (value.isMeta === true) message.isMeta = true;
  if (value.isCompactSummary === true) {
    message.isCompactSummary = true;
    message.isMeta = true;
  }
  keepToolUseResult(message, value, content);
  absorb(message, source, line);
  state.built.push(message);
  draft.items.push({ kind: "message", message, location: line.location });
}

/** The line's uuid as the message id, made unique (and reported) when an earlier line used it. */
function uniqueMessageId(state: ConversionState, line: SourceLine): string {
  let id = uuidOf(line) ?? `claude-code-${locationKey(line.location)}`;
  if (state.usedIds.has(id)) {
    reportProblem(
      state.draft,
      "duplicate_id",
      line.location,
      `The uuid ${id} was already used by an earlier line; this message was imported as ${id}-${locationKey(line.location)}.`,
    );
    id = `${id}-${locationKey(line.location)}`;
  }
  state.usedIds.add(id);
  return id;
}

/** Converts a `system/compact_boundary` line (its `compactMetadata`) to a compact boundary entry. */
function compactBoundaryEntry(line: SourceLine, timestamp: string): CompactBoundaryEntry {
  const value = line.value;
  const metadata = isRecord(value.compactMetadata) ? value.compactMetadata : {};
  const trigger: CompactTrigger = metadata.trigger === "manual" ? "manual" : "auto";
  const preserved = isRecord(metadata.preservedMessages) ? metadata.preservedMessages : undefined;
  const discovered = Array.isArray(metadata.preCompactDiscoveredTools)
    ? metadata.preCompactDiscoveredTools.filter((tool): tool is string => typeof tool === "string")
    : undefined;
  return {
    v: TRANSCRIPT_FORMAT_VERSION,
    type: "compact_boundary",
    id: uuidOf(line) ?? `boundary-${locationKey(line.location)}`,
    timestamp,
    trigger,
    layer: "claude-code",
    tokensBefore: typeof metadata.preTokens === "number" ? metadata.preTokens : 0,
    messagesSummarized: 0,
    logicalParentId: typeof value.logicalParentUuid === "string" ? value.logicalParentUuid : null,
    ...(discovered === undefined ? {} : { discoveredTools: discovered }),
    ...(preserved && typeof preserved.anchorUuid === "string" && Array.isArray(preserved.uuids)
      ? {
          preservedSegment: {
            anchorId: preserved.anchorUuid,
            messageIds: preserved.uuids.filter((id): id is string => typeof id === "string"),
          },
        }
      : {}),
  };
}

/**
 * Keeps a user line's structured `toolUseResult` (Bash stdout/stderr, the Edit patch, the Task agent's id and
 * usage, …) on the message's `metadata.toolUseResults`, keyed by the tool_use id it answers.
 */
function keepToolUseResult(message: Message, value: Record<string, unknown>, content: ContentBlock[]): void {
  if (value.toolUseResult === undefined) return;
  const answered = content.find((block) => block.type === "tool_result");
  const key =
    answered?.type === "tool_result"
      ? answered.tool_use_id
      : typeof value.sourceToolUseID === "string"
        ? value.sourceToolUseID
        : (uuidOf({ location: {}, value, time: undefined }) ?? "unknown");
  const results = (message.metadata?.toolUseResults ?? {}) as Record<string, unknown>;
  results[key] = value.toolUseResult;
  message.metadata = { ...message.metadata, toolUseResults: results };
}

/**
 * Converts an `attachment` line (`{type: "attachment", attachment: {type, …}}`) to an attachment entry: the
 * attachment's `type` becomes the kind; string content is kept as it is, a list of strings is joined with
 * newlines, content blocks are normalised, and an attachment without `content` keeps its fields as JSON text.
 * Every other field of the attachment is kept in `metadata.fields`.
 */
function attachmentEntry(
  line: SourceLine,
  timestamp: string,
  sessionId: string | undefined,
): AttachmentEntry {
  const raw = line.value.attachment as Record<string, unknown>;
  const { type, content: rawContent, ...fields } = raw;
  let content: string | ContentBlock[];
  if (typeof rawContent === "string") content = rawContent;
  else if (Array.isArray(rawContent) && rawContent.every((item) => typeof item === "string")) {
    content = rawContent.join("\n");
  } else if (
    Array.isArray(rawContent) &&
    rawContent.every((item) => isRecord(item) && typeof item.type === "string")
  ) {
    content = normalizeContent(rawContent);
  } else if (rawContent !== undefined) content = JSON.stringify(rawContent);
  else content = JSON.stringify(fields);
  const source = [fields.hookName, fields.filename, fields.path, fields.command].find(
    (candidate): candidate is string => typeof candidate === "string",
  );
  const uuid = uuidOf(line);
  const parent = parentOf(line);
  return {
    v: TRANSCRIPT_FORMAT_VERSION,
    type: "attachment",
    id: uuid ?? `attachment-${locationKey(line.location)}`,
    timestamp,
    ...(sessionId === undefined ? {} : { sessionId }),
    attachment: {
      kind: typeof type === "string" ? type : "unknown",
      content,
      ...(source === undefined ? {} : { source }),
      metadata: {
        source: line.location,
        ...(parent === undefined ? {} : { parentUuid: parent }),
        fields,
      },
    },
  };
}

function findOpenResponse(built: Message[], responseId: string): Message | undefined {
  for (let index = built.length - 1; index >= 0; index--) {
    const message = built[index]!;
    if (message.role === "assistant") return message.responseId === responseId ? message : undefined;
    if (!isToolResultsOnly(message.content)) return undefined;
  }
  return undefined;
}

function isToolResultsOnly(content: ContentBlock[]): boolean {
  return content.length > 0 && content.every((block) => block.type === "tool_result");
}

function absorb(message: Message, source: Record<string, unknown>, line: SourceLine): void {
  if (message.role !== "assistant") return;
  const usage = usageFromSource(source.usage);
  if (usage) message.usage = usage;
  const stopReason = stopReasonFromSource(source.stop_reason);
  if (stopReason) message.stopReason = stopReason;
  if (typeof source.model === "string") message.model = source.model;
  const lines = message.metadata?.sourceLines as ImportLocation[] | undefined;
  // A new message already lists its own line; a merged line is always new (checking the whole list would
  // make a response split over many lines quadratic).
  if (lines && lines[lines.length - 1] !== line.location) lines.push(line.location);
}
