import type { Message, ToolPairRepair, ToolPairViolation } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";

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
  /** The source's session id, when it names one (Claude Code `sessionId`, an OpenHands instance id, …). */
  sessionId?: string;
  /** The directory the agent worked in, when the source records it (Claude Code `cwd`, SWE-agent `working_dir`). */
  workingDirectory?: string;
  /** The model of the last assistant message that names one, else the model the run was configured with. */
  model?: string;
  /** The first valid timestamp of the source (ISO 8601); absent when the source has no dates. */
  startedAt?: string;
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
  workingDirectory?: string;
  /** The model the run was configured with, used when no assistant message names its model. */
  configuredModel?: string;
  /** The first valid timestamp read from the source (set by `readTimestamp`). */
  startedAt?: string;
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
