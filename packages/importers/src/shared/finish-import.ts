import type { Message, ToolPairViolation } from "@unforget/core";
import { findToolPairViolations, repairToolPairs } from "@unforget/core";
import type { CompactBoundaryEntry, TranscriptEntry } from "@unforget/transcript";
import { TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";
import { appendAll } from "./append-all.ts";
import type {
  ImportDraft,
  ImportLocation,
  ImportRepair,
  ImportReport,
  ImportResult,
  ImportViolation,
} from "./import-result.ts";

/** Non-message entries keep their place: each is anchored after the message that preceded it in the source. */
interface Anchored {
  entry: TranscriptEntry;
  afterMessage: number;
}

interface Segment {
  boundary?: CompactBoundaryEntry;
  others: Anchored[];
  messages: Message[];
}

/**
 * Splits the items into segments at compact boundaries, repairs each segment's messages with
 * `repairToolPairs` (so the projection after any boundary is valid on its own), maps violations and repairs
 * back to source locations, and builds the entries and the report.
 */
export function finishImport(draft: ImportDraft): ImportResult {
  const { segments, locations, toolUseLocations } = splitSegments(draft);
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
      for (const { entry } of segment.others) entries.push(entry);
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
    appendAll(remaining, repaired.remaining);
    const placed = placeAnchoredEntries(segment.others, segment.messages, repaired.messages);
    appendAll(entries, placed.get(-1) ?? []);
    repaired.messages.forEach((message, position) => {
      entries.push({
        v: TRANSCRIPT_FORMAT_VERSION,
        type: "message",
        id: message.id,
        timestamp: message.timestamp,
        ...(draft.sessionId === undefined ? {} : { sessionId: draft.sessionId }),
        message,
      });
      appendAll(entries, placed.get(position) ?? []);
    });
    total += repaired.messages.length;
    live = repaired.messages;
  }

  let toolPairs = 0;
  let metaMessages = 0;
  let model: string | undefined;
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    for (const block of entry.message.content) if (block.type === "tool_use") toolPairs++;
    if (entry.message.isMeta) metaMessages++;
    // Claude Code writes "<synthetic>" on messages no model produced (API errors shown as replies).
    if (entry.message.model !== undefined && entry.message.model !== "<synthetic>")
      model = entry.message.model;
  }
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
  if (draft.sessionId !== undefined) result.sessionId = draft.sessionId;
  if (draft.workingDirectory !== undefined) result.workingDirectory = draft.workingDirectory;
  model ??= draft.configuredModel;
  if (model !== undefined) result.model = model;
  if (draft.startedAt !== undefined) result.startedAt = draft.startedAt;
  return result;
}

/** Groups the draft's items into segments at compact boundaries, remembering where each message came from. */
function splitSegments(draft: ImportDraft): {
  segments: Segment[];
  locations: Map<string, ImportLocation>;
  toolUseLocations: Map<string, ImportLocation>;
} {
  const locations = new Map<string, ImportLocation>();
  const toolUseLocations = new Map<string, ImportLocation>();
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
  return { segments, locations, toolUseLocations };
}

/**
 * Maps each anchored entry to the position in the repaired messages it follows (-1: before them all). An entry
 * whose anchor message was merged or dropped by the repair follows the nearest earlier message that survived.
 * The nearest survivor of every original message is found in one pass, so any number of entries costs linear
 * time.
 */
function placeAnchoredEntries(
  anchored: Anchored[],
  original: Message[],
  repaired: Message[],
): Map<number, TranscriptEntry[]> {
  const positionOf = new Map<string, number>();
  repaired.forEach((message, position) => {
    if (!positionOf.has(message.id)) positionOf.set(message.id, position);
  });
  const survivor: number[] = [];
  let nearest = -1;
  for (const message of original) {
    nearest = positionOf.get(message.id) ?? nearest;
    survivor.push(nearest);
  }
  const placed = new Map<number, TranscriptEntry[]>();
  for (const { entry, afterMessage } of anchored) {
    const position = afterMessage < 0 ? -1 : survivor[afterMessage]!;
    const list = placed.get(position) ?? [];
    list.push(entry);
    placed.set(position, list);
  }
  return placed;
}

function locationOrder(location: ImportLocation): number {
  return location.line ?? location.index ?? (typeof location.eventId === "number" ? location.eventId : 0);
}
