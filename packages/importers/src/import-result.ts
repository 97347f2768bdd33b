import type {
  CompactBoundaryEntry,
  Message,
  ToolPairRepair,
  ToolPairViolation,
  TranscriptEntry,
} from "@unforget/core";
import {
  findToolPairViolations,
  ImportError,
  repairToolPairs,
  TRANSCRIPT_FORMAT_VERSION,
} from "@unforget/core";

export type ImportFormat = "claude-code" | "swe-agent" | "mini-swe-agent" | "openhands" | "unforget";

/** Where something is in the source: a 1-based line (JSONL), a 0-based index (JSON arrays) or an event id. */
export interface ImportLocation {
  line?: number;
  index?: number;
  eventId?: string | number;
}

export interface ImportProblem {
  /** Short machine-readable kind, e.g. "invalid_json", "invalid_line", "duplicate_id", "unparsed_arguments". */
  kind: string;
  location: ImportLocation;
  /** One sentence saying what was found and what the importer did about it. */
  description: string;
}

/** A tool-pair violation found in the converted source, with where its message came from. */
export interface ImportViolation extends ToolPairViolation {
  location: ImportLocation;
}

/** A repair `repairToolPairs` applied, with where the changed message (or its tool_use) came from. */
export interface ImportRepair extends ToolPairRepair {
  location: ImportLocation;
}

export interface ImportCounts {
  /** Lines, history items or events read from the source. */
  sourceItems: number;
  /** Messages across all segments (before and after compact boundaries), after repair. */
  messages: number;
  /** Messages in the live context (`result.messages`: after the last boundary). */
  liveMessages: number;
  /** tool_use blocks paired with a tool_result (after repair; every tool_use has one). */
  toolPairs: number;
  /** Compact boundaries in the source. */
  boundaries: number;
  /** Summary entries (session titles, compaction summaries) in the source. */
  summaries: number;
  /** Messages marked `isMeta` (not the user's own words: caveats, demonstrations, system context). */
  metaMessages: number;
  /** Sidechain (subagent) lines left out of the main conversation. */
  sidechainSkipped: number;
  /** Lines left out because they are on an abandoned rewind branch. */
  offBranchSkipped: number;
  /** Source items folded into a message built from an earlier item (split responses, parallel results). */
  mergedSourceItems: number;
  /** Source items that carry no conversation (bookkeeping lines, state changes), by type. */
  skippedByType: Record<string, number>;
  /** Source items that could not be read (reported in `problems`). */
  invalid: number;
  /** Repairs applied (same as `report.repairs.length`). */
  repairs: number;
}

export interface ImportReport {
  format: ImportFormat;
  counts: ImportCounts;
  /** Defects of the source that are not tool-pair violations (unreadable lines, duplicate ids, …), with locations. */
  problems: ImportProblem[];
  /** Tool-pair violations of the converted source before repair, with locations. */
  violations: ImportViolation[];
  /** Every change made to reach a valid conversation. */
  repairs: ImportRepair[];
  /** Violations left after repair; empty unless the source was pathological. */
  remainingViolations: ToolPairViolation[];
}

export interface ImportResult {
  /** The live conversation (after the last compact boundary), repaired: no tool-pair violations. */
  messages: Message[];
  /** The whole history as transcript entries (boundaries, summaries, every segment's messages), in order. */
  entries: TranscriptEntry[];
  report: ImportReport;
  /** The system prompt, when the source had one (it is not a message in this model). */
  system?: string;
}

/** One item in source order, as an importer hands it to `finishImport`. */
export type ImportItem =
  | { kind: "message"; message: Message; location: ImportLocation }
  | { kind: "entry"; entry: TranscriptEntry };

/** Mutable state an importer fills while it reads. */
export interface ImportDraft {
  format: ImportFormat;
  items: ImportItem[];
  problems: ImportProblem[];
  counts: Pick<
    ImportCounts,
    | "sourceItems"
    | "sidechainSkipped"
    | "offBranchSkipped"
    | "mergedSourceItems"
    | "skippedByType"
    | "invalid"
  >;
  system?: string;
  sessionId?: string;
}

export function createImportDraft(format: ImportFormat): ImportDraft {
  return {
    format,
    items: [],
    problems: [],
    counts: {
      sourceItems: 0,
      sidechainSkipped: 0,
      offBranchSkipped: 0,
      mergedSourceItems: 0,
      skippedByType: {},
      invalid: 0,
    },
  };
}

export function countSkipped(draft: ImportDraft, type: string): void {
  draft.counts.skippedByType[type] = (draft.counts.skippedByType[type] ?? 0) + 1;
}

export function reportProblem(
  draft: ImportDraft,
  kind: string,
  location: ImportLocation,
  description: string,
): void {
  draft.problems.push({ kind, location, description });
}

/** Describes a location for messages: "line 12", "index 3", "event 41". */
export function describeLocation(location: ImportLocation): string {
  if (location.line !== undefined) return `line ${location.line}`;
  if (location.eventId !== undefined) return `event ${location.eventId}`;
  if (location.index !== undefined) return `index ${location.index}`;
  return "an unknown place";
}

/**
 * Splits the items into segments at compact boundaries, repairs each segment's messages with
 * `repairToolPairs` (so the projection after any boundary is valid on its own), maps violations and repairs
 * back to source locations, and builds the entries and the report.
 */
export function finishImport(draft: ImportDraft): ImportResult {
  const locations = new Map<string, ImportLocation>();
  const toolUseLocations = new Map<string, ImportLocation>();
  // Non-message entries keep their place: each is anchored after the message that preceded it in the source.
  type Anchored = { entry: TranscriptEntry; afterMessage: number };
  type Segment = { boundary?: CompactBoundaryEntry; others: Anchored[]; messages: Message[] };
  const segments: Segment[] = [{ others: [], messages: [] }];
  for (const item of draft.items) {
    const current = segments[segments.length - 1]!;
    if (item.kind === "message") {
      locations.set(item.message.id, item.location);
      for (const block of item.message.content) {
        if (block.type === "tool_use" && !toolUseLocations.has(block.id))
          toolUseLocations.set(block.id, item.location);
      }
      current.messages.push(item.message);
    } else if (item.entry.type === "compact_boundary") {
      segments.push({ boundary: item.entry, others: [], messages: [] });
    } else {
      current.others.push({ entry: item.entry, afterMessage: current.messages.length - 1 });
    }
  }

  const locate = (messageId: string, toolUseId?: string, fallback?: Message): ImportLocation =>
    locations.get(messageId) ??
    (toolUseId === undefined ? undefined : toolUseLocations.get(toolUseId)) ??
    (fallback === undefined ? undefined : locations.get(fallback.id)) ??
    {};
  const violations: ImportViolation[] = [];
  const repairs: ImportRepair[] = [];
  const remaining: ToolPairViolation[] = [];
  const entries: TranscriptEntry[] = [];
  let live: Message[] = [];
  let boundaries = 0;
  let summaries = 0;
  let total = 0;
  for (const segment of segments) {
    if (segment.boundary) {
      boundaries++;
      entries.push(segment.boundary);
    }
    for (const { entry } of segment.others) if (entry.type === "summary") summaries++;
    if (segment.messages.length === 0) {
      entries.push(...segment.others.map(({ entry }) => entry));
      live = segment.boundary ? [] : live;
      continue;
    }
    for (const violation of findToolPairViolations(segment.messages)) {
      violations.push({ ...violation, location: locate(violation.messageId, violation.toolUseId) });
    }
    const repaired = repairToolPairs(segment.messages);
    for (const repair of repaired.repairs) {
      // A synthetic leading message has no source: point at the message it was put in front of.
      repairs.push({ ...repair, location: locate(repair.messageId, repair.toolUseId, segment.messages[0]) });
    }
    remaining.push(...repaired.remaining);
    const placed = placeAnchoredEntries(segment.others, segment.messages, repaired.messages);
    entries.push(...(placed.get(-1) ?? []));
    repaired.messages.forEach((message, position) => {
      entries.push({
        v: TRANSCRIPT_FORMAT_VERSION,
        type: "message",
        id: message.id,
        timestamp: message.timestamp,
        ...(draft.sessionId === undefined ? {} : { sessionId: draft.sessionId }),
        message,
      });
      entries.push(...(placed.get(position) ?? []));
    });
    total += repaired.messages.length;
    live = repaired.messages;
  }

  const messageEntries = entries.filter((entry) => entry.type === "message");
  const toolPairs = messageEntries.reduce(
    (sum, entry) => sum + entry.message.content.filter((block) => block.type === "tool_use").length,
    0,
  );
  const metaMessages = messageEntries.filter((entry) => entry.message.isMeta).length;
  const report: ImportReport = {
    format: draft.format,
    counts: {
      ...draft.counts,
      messages: total,
      liveMessages: live.length,
      toolPairs,
      boundaries,
      summaries,
      metaMessages,
      repairs: repairs.length,
    },
    problems: [...draft.problems].sort((a, b) => locationOrder(a.location) - locationOrder(b.location)),
    violations,
    repairs,
    remainingViolations: remaining,
  };
  const result: ImportResult = { messages: live, entries, report };
  if (draft.system !== undefined) result.system = draft.system;
  return result;
}

/**
 * Maps each anchored entry to the position in the repaired messages it follows (-1: before them all). An entry
 * whose anchor message was merged or dropped by the repair follows the nearest earlier message that survived.
 */
function placeAnchoredEntries(
  anchored: { entry: TranscriptEntry; afterMessage: number }[],
  original: Message[],
  repaired: Message[],
): Map<number, TranscriptEntry[]> {
  const positionOf = new Map<string, number>();
  repaired.forEach((message, position) => {
    if (!positionOf.has(message.id)) positionOf.set(message.id, position);
  });
  const placed = new Map<number, TranscriptEntry[]>();
  for (const { entry, afterMessage } of anchored) {
    let position = -1;
    for (let index = afterMessage; index >= 0; index--) {
      const found = positionOf.get(original[index]!.id);
      if (found !== undefined) {
        position = found;
        break;
      }
    }
    const list = placed.get(position) ?? [];
    list.push(entry);
    placed.set(position, list);
  }
  return placed;
}

function locationOrder(location: ImportLocation): number {
  return location.line ?? location.index ?? (typeof location.eventId === "number" ? location.eventId : 0);
}

/** Parses a JSON string (or passes a parsed value through), throwing `ImportError` naming the expected format. */
export function parseJsonInput(json: unknown, format: ImportFormat, expected: string): unknown {
  if (typeof json !== "string") return json;
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new ImportError(
      `The ${format} input is not valid JSON (${error instanceof Error ? error.message : String(error)}); expected ${expected}.`,
      { format, cause: error },
    );
  }
}

const EPOCH = new Date(0).toISOString();

/** A timestamp from the source when it is a usable date (ISO string, seconds or milliseconds), else the fallback. */
export function sourceTimestamp(value: unknown, fallback: string | undefined): string {
  if (typeof value === "string" && value.length > 0) {
    const parsed = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
    if (!Number.isNaN(parsed)) return new Date(parsed).toISOString();
  }
  if (typeof value === "number" && Number.isFinite(value)) {
    return new Date(value < 1e12 ? value * 1000 : value).toISOString();
  }
  return fallback ?? EPOCH;
}
