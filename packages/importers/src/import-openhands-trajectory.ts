import type { ContentBlock, Message } from "@unforget/core";
import { ImportError, TRANSCRIPT_FORMAT_VERSION } from "@unforget/core";
import { parseArguments, textBlocks, textOf, toolUses } from "./convert-openai-chat.ts";
import type { ImportDraft, ImportLocation, ImportResult } from "./import-result.ts";
import {
  countSkipped,
  createImportDraft,
  finishImport,
  reportProblem,
  sourceTimestamp,
} from "./import-result.ts";
import { isRecord } from "./is-record.ts";
import { stopReasonFromSource, usageFromSource } from "./source-usage.ts";

const EXPECTED =
  "an OpenHands event stream: a JSON array of events, an object with a `history` (or `trajectory`) event array, or evaluation-output JSONL whose lines hold `history`";

/** Event kinds that carry no conversation: bookkeeping of the runtime, counted in `skippedByType`. */
const BOOKKEEPING: ReadonlySet<string> = new Set([
  "null",
  "agent_state_changed",
  "change_agent_state",
  "recall",
  "condensation",
  "condensation_request",
  "summarize",
]);

export interface OpenHandsInstanceImport {
  /** 1-based line of the instance in the evaluation output. */
  line: number;
  /** The instance id when the line has one (`instance_id`, or the issue number for resolver output). */
  instanceId: string | undefined;
  result: ImportResult;
}

/**
 * Imports an OpenHands trajectory (a string or the parsed value). Agent actions with
 * `tool_call_metadata` become one assistant message per model response (`model_response.id`), holding the
 * response's text and every tool call it made; observations become tool results, linked by the tool call id
 * or by `cause` (the id of the action they answer). Older event logs without tool call metadata get a
 * synthetic tool_use per action (id `openhands-<event>`) answered by the observation that follows it.
 * Environment events and state changes are counted, not converted; the agent's `system` action becomes
 * `result.system`. Given evaluation-output JSONL with several instances, the first is imported and the others
 * are reported (use `importOpenHandsEvaluationOutput` to import them all).
 */
export function importOpenHandsTrajectory(json: unknown): ImportResult {
  const instances = readInput(json);
  const first = instances[0]!;
  const result = importEvents(first.events, first.line);
  if (instances.length > 1) {
    result.report.problems.push({
      kind: "additional_instances",
      location: { line: instances[1]!.line ?? 2 },
      description: `The input holds ${instances.length} evaluation instances; only the first was imported. Use importOpenHandsEvaluationOutput to import each one.`,
    });
  }
  return result;
}

/** Imports every instance of an OpenHands evaluation output (JSONL, one `{instance_id, history, …}` per line). */
export function importOpenHandsEvaluationOutput(text: string): OpenHandsInstanceImport[] {
  return readInput(text).map((instance) => ({
    line: instance.line ?? 1,
    instanceId: instance.instanceId,
    result: importEvents(instance.events, instance.line),
  }));
}

interface Instance {
  events: unknown[];
  line: number | undefined;
  instanceId: string | undefined;
}

function readInput(json: unknown): Instance[] {
  let value: unknown = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch (error) {
      const instances = readJsonLines(json);
      if (instances.length === 0) {
        throw new ImportError(
          `The OpenHands input is neither JSON nor JSONL with event histories (${error instanceof Error ? error.message : String(error)}); expected ${EXPECTED}.`,
          { format: "openhands", cause: error },
        );
      }
      return instances;
    }
  }
  const instance = asInstance(value, undefined);
  if (!instance)
    throw new ImportError(`The input has no event list; expected ${EXPECTED}.`, { format: "openhands" });
  return [instance];
}

function readJsonLines(text: string): Instance[] {
  const instances: Instance[] = [];
  text.split("\n").forEach((raw, index) => {
    if (raw.trim().length === 0) return;
    try {
      const instance = asInstance(JSON.parse(raw), index + 1);
      if (instance) instances.push(instance);
    } catch {
      // A line that is not JSON cannot be an instance; if no line is, the caller reports the input as a whole.
    }
  });
  return instances;
}

function asInstance(value: unknown, line: number | undefined): Instance | undefined {
  if (Array.isArray(value))
    return value.length > 0 ? { events: value, line, instanceId: undefined } : undefined;
  if (!isRecord(value)) return undefined;
  const events = Array.isArray(value.history)
    ? value.history
    : Array.isArray(value.trajectory)
      ? value.trajectory
      : undefined;
  if (!events || events.length === 0) return undefined;
  const issue = isRecord(value.issue) ? value.issue.number : undefined;
  const id = value.instance_id ?? issue;
  return { events, line, instanceId: id === undefined ? undefined : String(id) };
}

interface Turn {
  message: Message;
  location: ImportLocation;
}

/** What the conversion of one event stream keeps between events. */
interface EventStreamState {
  draft: ImportDraft;
  /** Every event of the stream, for older logs whose observations must be looked up ahead. */
  events: unknown[];
  /** Messages of the current segment, in order; reset at a compact boundary. */
  turns: Turn[];
  /** The summary of the condensation converted last, to skip the observation that repeats it. */
  lastSummary: string | undefined;
  /** tool_use id of each converted action, by event id: how an observation's `cause` finds its call. */
  actionToolIds: Map<string | number, string>;
  /** Synthetic tool_uses of older logs still waiting for their observation, oldest first. */
  unanswered: { toolUseId: string; action: string }[];
  lastTimestamp: string | undefined;
  seenUserMessage: boolean;
}

/** One event's envelope, read once: where it is, when, what kind, and the fields the converters use. */
interface EventEnvelope {
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

function importEvents(events: unknown[], line: number | undefined): ImportResult {
  const state: EventStreamState = {
    draft: createImportDraft("openhands"),
    events,
    turns: [],
    lastSummary: undefined,
    actionToolIds: new Map(),
    unanswered: [],
    lastTimestamp: undefined,
    seenUserMessage: false,
  };
  events.forEach((raw, index) => {
    const event = readEnvelope(state, raw, index, line);
    if (event) convertEvent(state, event);
  });
  return finishImport(state.draft);
}

/** Counts the event and reads its envelope; reports and returns undefined when it is not an event. */
function readEnvelope(
  state: EventStreamState,
  raw: unknown,
  index: number,
  line: number | undefined,
): EventEnvelope | undefined {
  const { draft } = state;
  draft.counts.sourceItems++;
  if (!isRecord(raw)) {
    draft.counts.invalid++;
    reportProblem(draft, "invalid_event", { index }, "The event is not an object; it was skipped.");
    return undefined;
  }
  const eventId: string | number = typeof raw.id === "number" || typeof raw.id === "string" ? raw.id : index;
  const location: ImportLocation = { index, eventId, ...(line === undefined ? {} : { line }) };
  const timestamp = sourceTimestamp(raw.timestamp, state.lastTimestamp);
  state.lastTimestamp = timestamp;
  const action = typeof raw.action === "string" ? raw.action : undefined;
  const observation = typeof raw.observation === "string" ? raw.observation : undefined;
  if (action === undefined && observation === undefined) {
    draft.counts.invalid++;
    reportProblem(
      draft,
      "invalid_event",
      location,
      "The event is neither an action nor an observation; it was skipped.",
    );
    return undefined;
  }
  // Older logs name no source: the first message is the user's task, everything after it the agent's.
  const source =
    typeof raw.source === "string"
      ? raw.source
      : action === "message" && !state.seenUserMessage
        ? "user"
        : "agent";
  return {
    raw,
    index,
    eventId,
    location,
    timestamp,
    args: isRecord(raw.args) ? raw.args : raw,
    action,
    observation,
    source,
    idBase: `openhands-${line === undefined ? "" : `${line}-`}${eventId}`,
  };
}

/** Sends an event to the converter for its kind. */
function convertEvent(state: EventStreamState, event: EventEnvelope): void {
  const kind = (event.action ?? event.observation)!;
  if (event.action === "system") {
    appendSystemPrompt(state.draft, event);
    return;
  }
  if ((kind === "condensation" || kind === "summarize") && convertCondensation(state, event)) return;
  if (event.source === "environment" || BOOKKEEPING.has(kind)) {
    countSkipped(state.draft, `${event.source}:${event.action ? "action" : "observation"}:${kind}`);
    return;
  }
  const metadata = isRecord(event.raw.tool_call_metadata) ? event.raw.tool_call_metadata : undefined;
  if (event.action === "message") convertMessageAction(state, event);
  else if (event.action !== undefined && metadata) convertToolCallAction(state, event, metadata);
  else if (event.action !== undefined) convertUnlinkedAction(state, event, event.action);
  else convertObservation(state, event, event.observation!, metadata);
}

function appendSystemPrompt(draft: ImportDraft, { args, raw }: EventEnvelope): void {
  const text =
    typeof args.content === "string" ? args.content : typeof raw.message === "string" ? raw.message : "";
  draft.system = draft.system === undefined ? text : `${draft.system}\n\n${text}`;
}

/** Starts a new message of the current segment and puts it in the draft in source order. */
function startMessage(state: EventStreamState, role: "user" | "assistant", event: EventEnvelope): Message {
  const { location, timestamp, idBase } = event;
  const message: Message = { id: idBase, role, content: [], timestamp, metadata: { source: location } };
  state.turns.push({ message, location });
  state.draft.items.push({ kind: "message", message, location });
  return message;
}

/** The message a new item of this role joins: the last message when it has the same role, else a new one. */
function turnFor(state: EventStreamState, role: "user" | "assistant", event: EventEnvelope): Message {
  const previous = state.turns[state.turns.length - 1];
  if (previous?.message.role === role) {
    state.draft.counts.mergedSourceItems++;
    return previous.message;
  }
  return startMessage(state, role, event);
}

/** A chat message (`action: "message"`) from the user or the agent, with its images. */
function convertMessageAction(state: EventStreamState, event: EventEnvelope): void {
  const { args, raw } = event;
  const text =
    typeof args.content === "string" ? args.content : typeof raw.message === "string" ? raw.message : "";
  const images = Array.isArray(args.image_urls)
    ? args.image_urls.filter((url) => typeof url === "string")
    : [];
  const content: ContentBlock[] = [
    ...textBlocks(text),
    ...images.map((url): ContentBlock => ({ type: "image", source: { type: "url", url } })),
  ];
  if (event.source === "user") state.seenUserMessage = true;
  turnFor(state, event.source === "user" ? "user" : "assistant", event).content.push(...content);
}

/**
 * An action of an older log (no tool call metadata): a synthetic tool_use when an observation answers it
 * later in the stream, else only its thought or final text.
 */
function convertUnlinkedAction(state: EventStreamState, event: EventEnvelope, action: string): void {
  const { raw, args, eventId, index } = event;
  const answered = state.events
    .slice(index + 1)
    .some((next) => isRecord(next) && answersAction(next, raw, eventId));
  const thought = typeof args.thought === "string" ? args.thought : "";
  const message = turnFor(state, "assistant", event);
  if (thought.length > 0) message.content.push({ type: "text", text: thought });
  if (answered) {
    const toolUseId = event.idBase;
    const input = Object.fromEntries(
      Object.entries(args).filter(
        ([key]) => !["thought", "action", "id", "timestamp", "source", "message"].includes(key),
      ),
    );
    message.content.push({ type: "tool_use", id: toolUseId, name: action, input });
    state.actionToolIds.set(eventId, toolUseId);
    state.unanswered.push({ toolUseId, action });
  } else if (thought.length === 0) {
    const text = finalText(args, raw);
    if (text.length > 0) message.content.push({ type: "text", text });
  }
}

/** An observation: a tool result for the call it answers, or user text when it answers none. */
function convertObservation(
  state: EventStreamState,
  event: EventEnvelope,
  observation: string,
  metadata: Record<string, unknown> | undefined,
): void {
  const { raw, args } = event;
  const toolUseId =
    (metadata && typeof metadata.tool_call_id === "string" ? metadata.tool_call_id : undefined) ??
    (raw.cause !== undefined ? state.actionToolIds.get(raw.cause as string | number) : undefined) ??
    (raw.cause === undefined && raw.source === undefined
      ? positionalMatch(state.unanswered, observation)
      : undefined);
  const text = observationText(raw, args);
  if (toolUseId === undefined) {
    turnFor(state, "user", event).content.push({
      type: "text",
      text: text.length > 0 ? text : `[${observation}]`,
    });
    return;
  }
  const waiting = state.unanswered.findIndex((item) => item.toolUseId === toolUseId);
  if (waiting >= 0) state.unanswered.splice(waiting, 1);
  const result: ContentBlock = { type: "tool_result", tool_use_id: toolUseId, content: text };
  if (observation === "error") result.is_error = true;
  turnFor(state, "user", event).content.push(result);
}

/**
 * An action with tool call metadata: joins the assistant message of its model response (one response may
 * make several calls), or starts one holding the response's text, every tool call, usage and model.
 */
function convertToolCallAction(
  state: EventStreamState,
  event: EventEnvelope,
  metadata: Record<string, unknown>,
): void {
  const { raw, args, location, eventId } = event;
  const toolCallId = typeof metadata.tool_call_id === "string" ? metadata.tool_call_id : event.idBase;
  const response = isRecord(metadata.model_response) ? metadata.model_response : {};
  const responseId = typeof response.id === "string" ? response.id : `response-${toolCallId}`;
  state.actionToolIds.set(eventId, toolCallId);
  const current = newestAssistant(state.turns);
  let message: Message;
  if (current && current.responseId === responseId) {
    message = current;
    state.draft.counts.mergedSourceItems++;
  } else {
    message = startMessage(state, "assistant", event);
    fillFromModelResponse(message, response, responseId, location, state.draft);
  }
  if (!message.content.some((block) => block.type === "tool_use" && block.id === toolCallId)) {
    const name = typeof metadata.function_name === "string" ? metadata.function_name : String(raw.action);
    const input = Object.fromEntries(Object.entries(args).filter(([key]) => key !== "thought"));
    message.content.push({
      type: "tool_use",
      id: toolCallId,
      name,
      input: parseArguments(input, location, state.draft),
    });
  }
}

/** Copies a LiteLLM model response (first choice's text and tool calls, usage, model, stop reason) onto a message. */
function fillFromModelResponse(
  message: Message,
  response: Record<string, unknown>,
  responseId: string,
  location: ImportLocation,
  draft: ImportDraft,
): void {
  message.responseId = responseId;
  const choice = Array.isArray(response.choices) && isRecord(response.choices[0]) ? response.choices[0] : {};
  const modelMessage = isRecord(choice.message) ? choice.message : {};
  const text = textOf(modelMessage.content);
  if (text.length > 0) message.content.push({ type: "text", text });
  message.content.push(...toolUses(modelMessage.tool_calls, location, draft));
  const usage = usageFromSource(response.usage);
  if (usage) message.usage = usage;
  if (typeof response.model === "string") message.model = response.model;
  const stopReason = stopReasonFromSource(choice.finish_reason);
  if (stopReason) message.stopReason = stopReason;
}

/**
 * A condensation that carries a summary becomes a compact boundary, a compact summary entry and the summary
 * as a meta user message opening the next segment. Events OpenHands keeps in its view (the first events, those
 * after the forgotten range) are listed by message id in the boundary's `preservedSegment`, not copied. A
 * condensation without a summary only forgets events: it becomes a `layer_decision`. Returns false when the
 * event is neither (it is then counted as bookkeeping).
 */
function convertCondensation(state: EventStreamState, event: EventEnvelope): boolean {
  const isAction = event.action !== undefined;
  const summary = isAction
    ? typeof event.args.summary === "string"
      ? event.args.summary
      : undefined
    : observationText(event.raw, event.args);
  const forgotten = forgottenEventIds(event.args);
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

/** A condensation without a summary: a `layer_decision` naming the forgotten events and their messages. */
function recordForgetting(state: EventStreamState, event: EventEnvelope, forgotten: Set<string>): void {
  const messageIds = state.turns
    .filter((turn) => turn.location.eventId !== undefined && forgotten.has(String(turn.location.eventId)))
    .map((turn) => turn.message.id);
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
          details: { eventIds: [...forgotten], source: event.location },
        },
      ],
    },
  });
  countSkipped(state.draft, "agent:action:condensation(no summary)");
}

/** A condensation with a summary: boundary, summary entry, and the summary message that opens the next segment. */
function startSegmentAfterSummary(
  state: EventStreamState,
  event: EventEnvelope,
  summary: string,
  forgotten: Set<string> | undefined,
): void {
  const { turns, draft } = state;
  const { idBase, timestamp } = event;
  const kept =
    forgotten === undefined
      ? []
      : turns.filter(
          (turn) => turn.location.eventId === undefined || !forgotten.has(String(turn.location.eventId)),
        );
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
  const message = startMessage(state, "user", event);
  message.content.push({ type: "text", text: summary });
  message.isMeta = true;
  message.isCompactSummary = true;
}

/** The event ids a condensation forgets: `forgotten_event_ids`, or the range start..end; undefined when neither. */
function forgottenEventIds(args: Record<string, unknown>): Set<string> | undefined {
  if (Array.isArray(args.forgotten_event_ids)) {
    return new Set(args.forgotten_event_ids.map((id) => String(id)));
  }
  const start = args.forgotten_events_start_id;
  const end = args.forgotten_events_end_id;
  if (typeof start === "number" && typeof end === "number" && end >= start && end - start < 1_000_000) {
    const ids = new Set<string>();
    for (let id = start; id <= end; id++) ids.add(String(id));
    return ids;
  }
  return undefined;
}

function newestAssistant(turns: Turn[]): Message | undefined {
  for (let index = turns.length - 1; index >= 0; index--) {
    const message = turns[index]!.message;
    if (message.role === "assistant") return message;
    if (!message.content.every((block) => block.type === "tool_result")) return undefined;
  }
  return undefined;
}

function answersAction(
  next: Record<string, unknown>,
  action: Record<string, unknown>,
  eventId: string | number,
): boolean {
  if (next.cause !== undefined) return next.cause === eventId;
  // Older logs have neither ids nor causes: an observation of the same kind right after the action answers it.
  return (
    action.id === undefined && typeof next.observation === "string" && next.observation === action.action
  );
}

function positionalMatch(
  unanswered: { toolUseId: string; action: string }[],
  observation: string,
): string | undefined {
  const match = unanswered.find((item) => item.action === observation);
  return match?.toolUseId;
}

function observationText(raw: Record<string, unknown>, args: Record<string, unknown>): string {
  if (typeof raw.content === "string" && raw.content.length > 0) return raw.content;
  if (typeof args.content === "string" && args.content.length > 0) return args.content;
  return typeof raw.message === "string" ? raw.message : "";
}

function finalText(args: Record<string, unknown>, raw: Record<string, unknown>): string {
  for (const value of [args.final_thought, args.thought, args.content, raw.message]) {
    if (typeof value === "string" && value.length > 0) return value;
  }
  return "";
}
