import type { ContentBlock, Message } from "@unforget/core";
import { appendAll } from "../shared/append-all.ts";
import { parseArguments, textBlocks, textOf, toolUses } from "../shared/convert-openai-chat.ts";
import { finishImport } from "../shared/finish-import.ts";
import { acceptNesting, convertItem } from "../shared/guard-import.ts";
import type { ImportDraft, ImportLocation, ImportProblem, ImportResult } from "../shared/import-result.ts";
import { countSkipped, createImportDraft, reportProblem } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { EPOCH, readTimestamp } from "../shared/source-timestamp.ts";
import { stopReasonFromSource, usageFromSource } from "../shared/source-usage.ts";
import { convertCondensation } from "./openhands-condensation.ts";
import {
  type AnswerIndex,
  type EventEnvelope,
  type EventStreamState,
  observationText,
  type PendingCalls,
  startMessage,
  type Turn,
} from "./openhands-event-stream.ts";

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

/** What the source says about the run besides its events (evaluation output's instance id and model). */
export interface EventStreamFacts {
  /** 1-based line of the instance in evaluation output; undefined for a plain event list. */
  line: number | undefined;
  instanceId: string | undefined;
  configuredModel: string | undefined;
  /** Problems of the file as a whole (unreadable lines of evaluation output), reported with this stream. */
  problems: ImportProblem[];
}

/** Converts one OpenHands event stream into an import result. */
export function convertOpenHandsEvents(events: unknown[], facts: EventStreamFacts): ImportResult {
  const draft = createImportDraft("openhands");
  if (facts.instanceId !== undefined) draft.sessionId = facts.instanceId;
  if (facts.configuredModel !== undefined) draft.configuredModel = facts.configuredModel;
  appendAll(draft.problems, facts.problems);
  const state: EventStreamState = {
    draft,
    events,
    answers: undefined,
    turns: [],
    turnsByEventId: new Map(),
    forgottenTurns: new Set(),
    lastSummary: undefined,
    actionToolIds: new Map(),
    pending: { byAction: new Map(), answered: new Set() },
    lastTimestamp: undefined,
    seenUserMessage: false,
  };
  events.forEach((raw, index) => {
    const event = readEnvelope(state, raw, index, facts.line);
    if (event) convertItem(draft, event.location, () => convertEvent(state, event));
  });
  return finishImport(draft);
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
  if (!acceptNesting(draft, location, raw)) return undefined;
  const timestamp = readTimestamp(draft, raw.timestamp, location) ?? state.lastTimestamp ?? EPOCH;
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
  appendAll(turnFor(state, event.source === "user" ? "user" : "assistant", event).content, content);
}

/**
 * An action of an older log (no tool call metadata): a synthetic tool_use when an observation answers it
 * later in the stream, else only its thought or final text.
 */
function convertUnlinkedAction(state: EventStreamState, event: EventEnvelope, action: string): void {
  const { raw, args, eventId } = event;
  const answered = isAnsweredLater(state, event, action);
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
    const queue = state.pending.byAction.get(action);
    if (queue) queue.toolUseIds.push(toolUseId);
    else state.pending.byAction.set(action, { toolUseIds: [toolUseId], next: 0 });
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
      ? positionalMatch(state.pending, observation)
      : undefined);
  const text = observationText(raw, args);
  if (toolUseId === undefined) {
    turnFor(state, "user", event).content.push({
      type: "text",
      text: text.length > 0 ? text : `[${observation}]`,
    });
    return;
  }
  state.pending.answered.add(toolUseId);
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
  appendAll(message.content, toolUses(modelMessage.tool_calls, location, draft));
  const usage = usageFromSource(response.usage);
  if (usage) message.usage = usage;
  if (typeof response.model === "string") message.model = response.model;
  const stopReason = stopReasonFromSource(choice.finish_reason);
  if (stopReason) message.stopReason = stopReason;
}

function newestAssistant(turns: Turn[]): Message | undefined {
  for (let index = turns.length - 1; index >= 0; index--) {
    const message = turns[index]!.message;
    if (message.role === "assistant") return message;
    if (!message.content.every((block) => block.type === "tool_result")) return undefined;
  }
  return undefined;
}

/**
 * Whether an observation later in the stream answers this action: one whose `cause` is the action's id, or
 * (older logs with neither ids nor causes) a cause-less observation of the same kind.
 */
function isAnsweredLater(state: EventStreamState, event: EventEnvelope, action: string): boolean {
  state.answers ??= indexAnswers(state.events);
  const byCause = state.answers.lastCause.get(event.eventId) ?? -1;
  if (byCause > event.index) return true;
  if (event.raw.id !== undefined) return false;
  return (state.answers.lastUncausedObservation.get(action) ?? -1) > event.index;
}

function indexAnswers(events: unknown[]): AnswerIndex {
  const answers: AnswerIndex = { lastCause: new Map(), lastUncausedObservation: new Map() };
  events.forEach((event, position) => {
    if (!isRecord(event)) return;
    if (event.cause !== undefined) answers.lastCause.set(event.cause, position);
    else if (typeof event.observation === "string")
      answers.lastUncausedObservation.set(event.observation, position);
  });
  return answers;
}

/** The oldest waiting tool_use of the observation's kind (older logs answer in order). */
function positionalMatch(pending: PendingCalls, observation: string): string | undefined {
  const queue = pending.byAction.get(observation);
  if (!queue) return undefined;
  while (queue.next < queue.toolUseIds.length && pending.answered.has(queue.toolUseIds[queue.next]!))
    queue.next++;
  return queue.toolUseIds[queue.next];
}

function finalText(args: Record<string, unknown>, raw: Record<string, unknown>): string {
  for (const value of [args.final_thought, args.thought, args.content, raw.message]) {
    if (typeof value === "string" && value.length > 0) return value;
  }
  return "";
}
