import type { Message } from "@unforget/core";
import type { ImportDraft, ImportLocation } from "../shared/import-result.ts";

/** One message of the current segment, with where its event was. */
export interface Turn {
  message: Message;
  location: ImportLocation;
  /** Position in the segment, to list forgotten messages in conversation order. */
  position: number;
}

/** Synthetic tool_uses of older logs waiting for an observation: per action kind, oldest first. */
export interface PendingCalls {
  byAction: Map<string, { toolUseIds: string[]; next: number }>;
  /** Answered ids, skipped when met in a queue (removing them from the middle would cost a scan). */
  answered: Set<string>;
}

/** Where later events answer earlier actions, computed once per stream so no action scans the rest. */
export interface AnswerIndex {
  /** The last position of an event with each `cause`. */
  lastCause: Map<unknown, number>;
  /** The last position of a cause-less observation of each kind (older logs pair by kind and order). */
  lastUncausedObservation: Map<string, number>;
}

/** What the conversion of one event stream keeps between events. */
export interface EventStreamState {
  draft: ImportDraft;
  /** Every event of the stream, for older logs whose observations must be looked up ahead. */
  events: unknown[];
  /** Built on the first action without tool call metadata. */
  answers: AnswerIndex | undefined;
  /** Messages of the current segment, in order; reset at a compact boundary. */
  turns: Turn[];
  /** The current segment's messages by the id (as text) of the event that started them. */
  turnsByEventId: Map<string, Turn[]>;
  /** Messages a summary-less condensation already forgot, so none is listed twice. */
  forgottenTurns: Set<Turn>;
  /** The summary of the condensation converted last, to skip the observation that repeats it. */
  lastSummary: string | undefined;
  /** tool_use id of each converted action, by event id: how an observation's `cause` finds its call. */
  actionToolIds: Map<string | number, string>;
  pending: PendingCalls;
  lastTimestamp: string | undefined;
  seenUserMessage: boolean;
}

/** One event's envelope, read once: where it is, when, what kind, and the fields the converters use. */
export interface EventEnvelope {
  raw: Record<string, unknown>;
  index: number;
  eventId: string | number;
  location: ImportLocation;
  timestamp: string;
  /** `args` when the event has them (newer logs), else the event itself (older logs keep fields at the top). */
  args: Record<string, unknown>;
  action: string | undefined;
  observation: string | undefined;
  source: string;
  /** Prefix of the ids of what this event becomes (`openhands-[<line>-]<event id>`). */
  idBase: string;
}

/** Starts a new message of the current segment and puts it in the draft in source order. */
export function startMessage(
  state: EventStreamState,
  role: "user" | "assistant",
  event: EventEnvelope,
): Message {
  const { location, timestamp, idBase } = event;
  const message: Message = { id: idBase, role, content: [], timestamp, metadata: { source: location } };
  const turn: Turn = { message, location, position: state.turns.length };
  state.turns.push(turn);
  const key = String(event.eventId);
  const sameEvent = state.turnsByEventId.get(key);
  if (sameEvent) sameEvent.push(turn);
  else state.turnsByEventId.set(key, [turn]);
  state.draft.items.push({ kind: "message", message, location });
  return message;
}

/** The text of an observation: its `content`, else `args.content`, else its `message`. */
export function observationText(raw: Record<string, unknown>, args: Record<string, unknown>): string {
  if (typeof raw.content === "string" && raw.content.length > 0) return raw.content;
  if (typeof args.content === "string" && args.content.length > 0) return args.content;
  return typeof raw.message === "string" ? raw.message : "";
}
