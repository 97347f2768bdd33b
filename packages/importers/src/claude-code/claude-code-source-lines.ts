import type { ContentBlock } from "@unforget/core";
import { normalizeContent } from "@unforget/core";
import { TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";
import { acceptNesting } from "../shared/guard-import.ts";
import type { ImportDraft, ImportLocation } from "../shared/import-result.ts";
import { countSkipped, describeLocation, reportProblem } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { EPOCH, readTimestamp } from "../shared/source-timestamp.ts";
import type { ClaudeCodeLinesOptions } from "./import-claude-code-transcript.ts";

/** One line of the source with where it was, read once. */
export interface SourceLine {
  location: ImportLocation;
  value: Record<string, unknown>;
  /** The line's `timestamp` as ISO 8601, read (and reported when unusable) once. */
  time: string | undefined;
}

/**
 * Sorts the lines: user, assistant, compact boundary and attachment lines are the conversation (returned in
 * order); summary lines become title summaries; sidechain lines (unless this is a subagent's own file) and
 * bookkeeping lines are counted; lines missing what their type needs are reported.
 */
export function sortLines(
  lines: SourceLine[],
  draft: ImportDraft,
  options: ClaudeCodeLinesOptions,
): SourceLine[] {
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
export function locationKey(location: ImportLocation): string {
  return location.line !== undefined ? `line${location.line}` : `index${location.index ?? 0}`;
}

/** Reads the JSONL lines (or the items of a JSON array / `{ loglines }` document) that are JSON objects. */
export function readSourceLines(text: string, draft: ImportDraft): SourceLine[] {
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

export const uuidOf = (line: SourceLine): string | undefined =>
  typeof line.value.uuid === "string" ? line.value.uuid : undefined;
export const parentOf = (line: SourceLine): string | undefined => {
  if (typeof line.value.parentUuid === "string") return line.value.parentUuid;
  return typeof line.value.logicalParentUuid === "string" ? line.value.logicalParentUuid : undefined;
};
export const responseIdOf = (line: SourceLine): string | undefined => {
  const message = line.value.message;
  return isRecord(message) && typeof message.id === "string" ? message.id : undefined;
};

/**
 * Follows parent links back from the newest leaf. Only used when every line after the first names a parent
 * that exists (otherwise the links are not trustworthy and file order is used). Lines that are split parts
 * of an on-branch response, or tool results answering an on-branch tool_use, stay on the branch.
 */
export function selectActiveBranch(
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
