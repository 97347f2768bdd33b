import { TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";
import type { ImportDraft } from "../shared/import-result.ts";
import { countSkipped, reportProblem } from "../shared/import-result.ts";
import {
  type EventEnvelope,
  type EventStreamState,
  observationText,
  startMessage,
  type Turn,
} from "./openhands-event-stream.ts";

/**
 * A condensation that carries a summary becomes a compact boundary, a compact summary entry and the summary
 * as a meta user message opening the next segment. Events OpenHands keeps in its view (the first events, those
 * after the forgotten range) are listed by message id in the boundary's `preservedSegment`, not copied. A
 * condensation without a summary only forgets events: it becomes a `layer_decision`. Returns false when the
 * event is neither (it is then counted as bookkeeping).
 */
export function convertCondensation(state: EventStreamState, event: EventEnvelope): boolean {
  const isAction = event.action !== undefined;
  const summary = isAction
    ? typeof event.args.summary === "string"
      ? event.args.summary
      : undefined
    : observationText(event.raw, event.args);
  const forgotten = forgottenEvents(state.draft, event);
  if (summary === undefined || summary.trim().length === 0) {
    if (!isAction || forgotten === undefined) return false;
    recordForgetting(state, event, forgotten);
    return true;
  }
  if (!isAction && summary === state.lastSummary) {
    // The observation that repeats the summary of the condensation action just converted.
    state.draft.counts.mergedSourceItems++;
    return true;
  }
  state.lastSummary = summary;
  startSegmentAfterSummary(state, event, summary, forgotten);
  return true;
}

/**
 * A condensation without a summary: a `layer_decision` naming the forgotten events and the messages they
 * started that no earlier decision forgot (each message is listed once, so the entries stay linear in size).
 */
function recordForgetting(state: EventStreamState, event: EventEnvelope, forgotten: ForgottenEvents): void {
  const messageIds = newlyForgottenTurns(state, forgotten).map((turn) => turn.message.id);
  state.draft.items.push({
    kind: "entry",
    entry: {
      v: TRANSCRIPT_FORMAT_VERSION,
      type: "layer_decision",
      id: `${event.idBase}-condensation`,
      timestamp: event.timestamp,
      layer: "openhands-condenser",
      edits: [
        {
          kind: "forget_events",
          ...(messageIds.length > 0 ? { messageIds } : {}),
          details: {
            ...(forgotten.ids === undefined ? {} : { eventIds: forgotten.ids }),
            ...(forgotten.range === undefined ? {} : { eventRange: forgotten.range }),
            source: event.location,
          },
        },
      ],
    },
  });
  countSkipped(state.draft, "agent:action:condensation(no summary)");
}

/**
 * The current segment's messages a condensation forgets that no earlier one did, in conversation order. An id
 * list is looked up; a range is walked when it is shorter than the segment, else the segment is scanned.
 */
function newlyForgottenTurns(state: EventStreamState, forgotten: ForgottenEvents): Turn[] {
  const found = new Set<Turn>();
  const add = (turn: Turn) => {
    if (!state.forgottenTurns.has(turn)) found.add(turn);
  };
  if (forgotten.ids !== undefined) {
    for (const id of forgotten.ids) for (const turn of state.turnsByEventId.get(id) ?? []) add(turn);
  } else if (
    forgotten.range !== undefined &&
    forgotten.range.end - forgotten.range.start < state.turns.length
  ) {
    for (let id = forgotten.range.start; id <= forgotten.range.end; id++) {
      for (const turn of state.turnsByEventId.get(String(id)) ?? []) add(turn);
    }
  } else {
    for (const turn of state.turns) {
      if (turn.location.eventId !== undefined && forgotten.has(turn.location.eventId)) add(turn);
    }
  }
  for (const turn of found) state.forgottenTurns.add(turn);
  return [...found].sort((a, b) => a.position - b.position);
}

/** A condensation with a summary: boundary, summary entry, and the summary message that opens the next segment. */
function startSegmentAfterSummary(
  state: EventStreamState,
  event: EventEnvelope,
  summary: string,
  forgotten: ForgottenEvents | undefined,
): void {
  const { turns, draft } = state;
  const { idBase, timestamp } = event;
  const kept =
    forgotten === undefined
      ? []
      : turns.filter((turn) => turn.location.eventId === undefined || !forgotten.has(turn.location.eventId));
  const previous = turns[turns.length - 1];
  const boundaryId = `${idBase}-boundary`;
  draft.items.push({
    kind: "entry",
    entry: {
      v: TRANSCRIPT_FORMAT_VERSION,
      type: "compact_boundary",
      id: boundaryId,
      timestamp,
      trigger: "auto",
      layer: "openhands",
      tokensBefore: 0,
      messagesSummarized: turns.length - kept.length,
      logicalParentId: previous?.message.id ?? null,
      ...(kept.length > 0
        ? { preservedSegment: { anchorId: idBase, messageIds: kept.map((turn) => turn.message.id) } }
        : {}),
    },
  });
  draft.items.push({
    kind: "entry",
    entry: {
      v: TRANSCRIPT_FORMAT_VERSION,
      type: "summary",
      id: `${idBase}-summary`,
      timestamp,
      kind: "compact",
      text: summary,
      boundaryId,
      ...(previous === undefined ? {} : { leafId: previous.message.id }),
    },
  });
  turns.length = 0;
  state.turnsByEventId.clear();
  state.forgottenTurns.clear();
  const message = startMessage(state, "user", event);
  message.content.push({ type: "text", text: summary });
  message.isMeta = true;
  message.isCompactSummary = true;
}

/** The events a condensation forgets: an explicit id list, or a range of numeric ids. */
interface ForgottenEvents {
  ids?: string[];
  range?: { start: number; end: number };
  has(eventId: string | number): boolean;
}

/**
 * Reads `forgotten_event_ids` (ids that are not a string or a number are reported and left out), or the range
 * `forgotten_events_start_id`..`forgotten_events_end_id` (kept as a range, never expanded); undefined when
 * neither is there.
 */
function forgottenEvents(draft: ImportDraft, event: EventEnvelope): ForgottenEvents | undefined {
  const { args } = event;
  if (Array.isArray(args.forgotten_event_ids)) {
    const ids: string[] = [];
    let invalid = 0;
    for (const id of args.forgotten_event_ids) {
      if (typeof id === "string" || typeof id === "number") ids.push(String(id));
      else invalid++;
    }
    if (invalid > 0) {
      reportProblem(
        draft,
        "invalid_event_id",
        event.location,
        `${invalid} of the condensation's forgotten_event_ids are neither numbers nor strings; they were left out.`,
      );
    }
    const set = new Set(ids);
    return { ids: [...set], has: (eventId) => set.has(String(eventId)) };
  }
  const start = args.forgotten_events_start_id;
  const end = args.forgotten_events_end_id;
  if (
    typeof start === "number" &&
    typeof end === "number" &&
    Number.isInteger(start) &&
    Number.isInteger(end) &&
    end >= start
  ) {
    return {
      range: { start, end },
      has: (eventId) => {
        const id = typeof eventId === "number" ? eventId : Number(eventId);
        return Number.isInteger(id) && id >= start && id <= end;
      },
    };
  }
  return undefined;
}
