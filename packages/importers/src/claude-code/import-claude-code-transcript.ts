import type { ContentBlock, Message } from "@unforget/core";
import { normalizeContent } from "@unforget/core";
import type { AttachmentEntry, CompactBoundaryEntry, CompactTrigger } from "@unforget/transcript";
import { TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";
import { appendAll } from "../shared/append-all.ts";
import { finishImport } from "../shared/finish-import.ts";
import { acceptNesting, convertItem, guardImport } from "../shared/guard-import.ts";
import type { ImportDraft, ImportLocation, ImportResult } from "../shared/import-result.ts";
import { countSkipped, createImportDraft, describeLocation, reportProblem } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { ImportError } from "../shared/session-errors.ts";
import { EPOCH, readTimestamp } from "../shared/source-timestamp.ts";
import { stopReasonFromSource, usageFromSource } from "../shared/source-usage.ts";

interface SourceLine {
  location: ImportLocation;
  value: Record<string, unknown>;
  /** The line's `timestamp` as ISO 8601, read (and reported when unusable) once. */
  time: string | undefined;
}

const EXPECTED =
  "Claude Code session JSONL (one JSON object per line with type, uuid, parentUuid, message), or a JSON object with a `loglines` array";

/**
 * Imports a Claude Code session (`~/.claude/projects/<project>/<session>.jsonl`). Assistant lines split from
 * one response are merged by `message.id`; tool results come from user lines; `isMeta` lines become meta
 * messages; `system/compact_boundary` lines become boundaries and the `isCompactSummary` user line after
 * one becomes the summary message; `summary` lines become title summaries; sidechain (subagent) lines are
 * skipped and counted. When parent links are complete and a `/rewind` left several branches, the active
 * branch (ending at the newest leaf) is imported and the other lines are counted as off-branch. Unreadable
 * lines are reported with their line numbers; tool-pair defects are repaired and reported.
 */
export function importClaudeCodeTranscript(text: string): ImportResult {
  return guardImport("claude-code", () => importClaudeCodeLines(text, { subagentFile: false }));
}

export interface ClaudeCodeLinesOptions {
  /**
   * True for a subagent's own file (`subagents/agent-<id>.jsonl`): its lines carry `isSidechain: true` and are
   * the conversation, so they are imported instead of skipped.
   */
  subagentFile: boolean;
}

/** Imports Claude Code lines; `importClaudeCodeTranscript` and `importClaudeCodeSession` share it. */
export function importClaudeCodeLines(text: string, options: ClaudeCodeLinesOptions): ImportResult {
  if (typeof text !== "string") {
    throw new ImportError(`importClaudeCodeTranscript expects the file's text; expected ${EXPECTED}.`, {
      format: "claude-code",
    });
  }
  const draft = createImportDraft("claude-code");
  const lines = readSourceLines(text, draft);
  if (lines.length === 0) {
    throw new ImportError(
      `The input has no Claude Code line (no JSON object among ${draft.counts.sourceItems} item(s)); expected ${EXPECTED}.`,
      { format: "claude-code" },
    );
  }
  const conversational = sortLines(lines, draft, options);
  const active = selectActiveBranch(conversational, lines, draft, options.subagentFile);
  convertLines(active, draft);
  return finishImport(draft);
}

/**
 * Sorts the lines: user, assistant, compact boundary and attachment lines are the conversation (returned in
 * order); summary lines become title summaries; sidechain lines (unless this is a subagent's own file) and
 * bookkeeping lines are counted; lines missing what their type needs are reported.
 */
function sortLines(lines: SourceLine[], draft: ImportDraft, options: ClaudeCodeLinesOptions): SourceLine[] {
  const conversational: SourceLine[] = [];
  const timeByUuid = new Map<string, string>();
  for (const line of lines) {
    const uuid = uuidOf(line);
    if (uuid !== undefined && line.time !== undefined) timeByUuid.set(uuid, line.time);
  }
  for (const line of lines) {
    const type = line.value.type;
    if (typeof line.value.sessionId === "string") draft.sessionId ??= line.value.sessionId;
    if (typeof line.value.cwd === "string") draft.workingDirectory ??= line.value.cwd;
    if (line.value.isSidechain === true && !options.subagentFile) {
      draft.counts.sidechainSkipped++;
      continue;
    }
    if (type === "user" || type === "assistant") {
      if (!isRecord(line.value.message) || !("content" in line.value.message)) {
        draft.counts.invalid++;
        reportProblem(
          draft,
          "invalid_line",
          line.location,
          `A ${type} line has no message object with content; it was skipped.`,
        );
        continue;
      }
      conversational.push(line);
    } else if (type === "system" && line.value.subtype === "compact_boundary") {
      conversational.push(line);
    } else if (type === "attachment") {
      if (!isRecord(line.value.attachment)) {
        draft.counts.invalid++;
        reportProblem(
          draft,
          "invalid_line",
          line.location,
          "An attachment line has no attachment object; it was skipped.",
        );
        continue;
      }
      conversational.push(line);
    } else if (type === "summary") {
      if (typeof line.value.summary !== "string") {
        draft.counts.invalid++;
        reportProblem(
          draft,
          "invalid_line",
          line.location,
          "A summary line has no summary text; it was skipped.",
        );
        continue;
      }
      const leafId = typeof line.value.leafUuid === "string" ? line.value.leafUuid : undefined;
      draft.items.push({
        kind: "entry",
        entry: {
          v: TRANSCRIPT_FORMAT_VERSION,
          type: "summary",
          id: `summary-${locationKey(line.location)}`,
          // Summary lines carry no date of their own: they describe the conversation up to their leaf.
          timestamp:
            line.time ??
            (leafId === undefined ? undefined : timeByUuid.get(leafId)) ??
            draft.startedAt ??
            EPOCH,
          kind: "title",
          text: line.value.summary,
          ...(leafId === undefined ? {} : { leafId }),
        },
      });
    } else {
      const subtype = typeof line.value.subtype === "string" ? `/${line.value.subtype}` : "";
      countSkipped(draft, typeof type === "string" ? `${type}${subtype}` : "untyped");
      if (typeof type !== "string") {
        reportProblem(
          draft,
          "untyped_line",
          line.location,
          "A JSON object without a `type` field was skipped.",
        );
      }
    }
  }
  return conversational;
}

/** A location as an id suffix ("line12", "index3"), for ids of items whose source line has no uuid. */
function locationKey(location: ImportLocation): string {
  return location.line !== undefined ? `line${location.line}` : `index${location.index ?? 0}`;
}

/** Reads the JSONL lines (or the items of a JSON array / `{ loglines }` document) that are JSON objects. */
function readSourceLines(text: string, draft: ImportDraft): SourceLine[] {
  if (/^\s*[[{]/.test(text)) {
    // A whole JSON document: an array of lines, or {loglines: [...]} as some exporters write it.
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined; // Not one document: read it as JSONL.
    }
    const list = Array.isArray(parsed) ? parsed : isRecord(parsed) ? parsed.loglines : undefined;
    if (Array.isArray(list)) return readArray(list, draft);
  }
  const out: SourceLine[] = [];
  const rawLines = text.split("\n");
  const endsWithNewline = text.endsWith("\n");
  rawLines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim().length === 0) return;
    draft.counts.sourceItems++;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      draft.counts.invalid++;
      const torn = !endsWithNewline && index === rawLines.length - 1;
      reportProblem(
        draft,
        torn ? "torn_line" : "invalid_json",
        { line },
        `${torn ? "The last line is cut off" : "The line is not valid JSON"} (${error instanceof Error ? error.message : String(error)}); it was skipped.`,
      );
      return;
    }
    if (!isRecord(value)) {
      draft.counts.invalid++;
      reportProblem(draft, "invalid_line", { line }, "The line is JSON but not an object; it was skipped.");
      return;
    }
    keepLine(draft, { line }, value, out);
  });
  return out;
}

function readArray(list: unknown[], draft: ImportDraft): SourceLine[] {
  const out: SourceLine[] = [];
  list.forEach((value, index) => {
    draft.counts.sourceItems++;
    if (isRecord(value)) keepLine(draft, { index }, value, out);
    else {
      draft.counts.invalid++;
      reportProblem(draft, "invalid_line", { index }, "The item is not an object; it was skipped.");
    }
  });
  return out;
}

/** Keeps a line that nests no deeper than the importers allow, with its timestamp read once. */
function keepLine(
  draft: ImportDraft,
  location: ImportLocation,
  value: Record<string, unknown>,
  out: SourceLine[],
): void {
  if (!acceptNesting(draft, location, value)) return;
  out.push({ location, value, time: readTimestamp(draft, value.timestamp, location) });
}

const uuidOf = (line: SourceLine): string | undefined =>
  typeof line.value.uuid === "string" ? line.value.uuid : undefined;
const parentOf = (line: SourceLine): string | undefined => {
  if (typeof line.value.parentUuid === "string") return line.value.parentUuid;
  return typeof line.value.logicalParentUuid === "string" ? line.value.logicalParentUuid : undefined;
};
const responseIdOf = (line: SourceLine): string | undefined => {
  const message = line.value.message;
  return isRecord(message) && typeof message.id === "string" ? message.id : undefined;
};

/**
 * Follows parent links back from the newest leaf. Only used when every line after the first names a parent
 * that exists (otherwise the links are not trustworthy and file order is used). Lines that are split parts
 * of an on-branch response, or tool results answering an on-branch tool_use, stay on the branch.
 */
function selectActiveBranch(
  lines: SourceLine[],
  allLines: SourceLine[],
  draft: ImportDraft,
  subagentFile: boolean,
): SourceLine[] {
  // Parent links may pass through lines that carry no conversation (system notes, attachments, progress).
  const mainLines = subagentFile ? allLines : allLines.filter((line) => line.value.isSidechain !== true);
  const byUuid = new Map<string, SourceLine>();
  for (const line of mainLines) {
    const uuid = uuidOf(line);
    if (uuid !== undefined && !byUuid.has(uuid)) byUuid.set(uuid, line);
  }
  const linked = lines.every((line, index) => {
    if (index === 0 || isUnlinkedAttachment(line)) return true;
    const parent = parentOf(line);
    return parent !== undefined && byUuid.has(parent);
  });
  if (!linked || lines.length < 2) return lines;
  const hasChildren = new Set<string>();
  for (const line of mainLines) {
    const parent = parentOf(line);
    if (parent !== undefined) hasChildren.add(parent);
  }
  const leaves = mainLines.filter((line) => {
    const uuid = uuidOf(line);
    return uuid !== undefined && !hasChildren.has(uuid);
  });
  if (leaves.length <= 1) return lines;
  // The newest leaf by date; an undated leaf never wins over a dated one, and among equals the later line wins.
  let newest = leaves[0]!;
  for (const leaf of leaves) {
    if (timeOf(leaf) >= timeOf(newest)) newest = leaf;
  }
  const onBranch = new Set<SourceLine>();
  const seen = new Set<string>();
  let cursor: SourceLine | undefined = newest;
  while (cursor && !onBranch.has(cursor)) {
    onBranch.add(cursor);
    const parent = parentOf(cursor);
    if (parent === undefined || seen.has(parent)) break;
    seen.add(parent);
    cursor = byUuid.get(parent);
  }
  const responseIds = new Set<string>();
  const toolUseIds = new Set<string>();
  for (const line of onBranch) {
    const responseId = responseIdOf(line);
    if (responseId !== undefined && line.value.type === "assistant") responseIds.add(responseId);
  }
  for (const line of lines) {
    const responseId = responseIdOf(line);
    if (line.value.type === "assistant" && responseId !== undefined && responseIds.has(responseId)) {
      onBranch.add(line);
    }
  }
  for (const line of onBranch) {
    if (line.value.type !== "assistant") continue;
    for (const block of contentOf(line)) if (block.type === "tool_use") toolUseIds.add(block.id);
  }
  for (const line of lines) {
    if (line.value.type !== "user" || onBranch.has(line)) continue;
    const blocks = contentOf(line);
    if (
      blocks.length > 0 &&
      blocks.every((block) => block.type === "tool_result" && toolUseIds.has(block.tool_use_id))
    ) {
      onBranch.add(line);
    }
  }
  const kept = lines.filter((line) => onBranch.has(line) || isUnlinkedAttachment(line));
  const dropped = lines.length - kept.length;
  if (dropped > 0) {
    draft.counts.offBranchSkipped += dropped;
    const first = lines.find((line) => !onBranch.has(line))!;
    reportProblem(
      draft,
      "rewind_branch",
      first.location,
      `${dropped} line(s) belong to branches abandoned by a rewind; the branch ending at the newest leaf (${describeLocation(newest.location)}) was imported.`,
    );
  }
  return kept;
}

function timeOf(line: SourceLine): number {
  return line.time === undefined ? Number.NEGATIVE_INFINITY : Date.parse(line.time);
}

/** An attachment line outside the parent chain: it cannot be placed on a branch, so it is kept in file order. */
function isUnlinkedAttachment(line: SourceLine): boolean {
  return line.value.type === "attachment" && (uuidOf(line) === undefined || parentOf(line) === undefined);
}

function contentOf(line: SourceLine): ContentBlock[] {
  const message = line.value.message;
  return isRecord(message) ? normalizeContent(message.content) : [];
}

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

function convertLines(lines: SourceLine[], draft: ImportDraft): void {
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
