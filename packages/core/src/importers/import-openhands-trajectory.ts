import { ImportError } from "../errors.ts";
import type { ContentBlock, Message } from "../message.ts";
import { isRecord } from "../message.ts";
import { TRANSCRIPT_FORMAT_VERSION } from "../transcript-entry.ts";
import { parseArguments, textBlocks, textOf, toolUses } from "./convert-openai-chat.ts";
import type { ImportItem, ImportLocation, ImportResult } from "./import-result.ts";
import {
  countSkipped,
  createImportDraft,
  finishImport,
  reportProblem,
  sourceTimestamp,
} from "./import-result.ts";
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

function importEvents(events: unknown[], line: number | undefined): ImportResult {
  const draft = createImportDraft("openhands");
  // Messages of the current segment (reset at a compact boundary); `sequence` holds every item in order.
  const turns: Turn[] = [];
  const sequence: ImportItem[] = [];
  let lastSummary: string | undefined;
  const actionToolIds = new Map<string | number, string>();
  const unanswered: { toolUseId: string; action: string }[] = [];
  let lastTimestamp: string | undefined;
  let seenUserMessage = false;

  const last = () => turns[turns.length - 1];
  const newMessage = (
    role: "user" | "assistant",
    location: ImportLocation,
    timestamp: string,
    id: string,
  ): Message => {
    const message: Message = { id, role, content: [], timestamp, metadata: { source: location } };
    turns.push({ message, location });
    sequence.push({ kind: "message", message, location });
    return message;
  };
  /** The message a new item of this role joins: the last message when it has the same role, else a new one. */
  const turnFor = (
    role: "user" | "assistant",
    location: ImportLocation,
    timestamp: string,
    id: string,
  ): Message => {
    const previous = last();
    if (previous?.message.role === role) {
      draft.counts.mergedSourceItems++;
      return previous.message;
    }
    return newMessage(role, location, timestamp, id);
  };

  events.forEach((raw, index) => {
    draft.counts.sourceItems++;
    if (!isRecord(raw)) {
      draft.counts.invalid++;
      reportProblem(draft, "invalid_event", { index }, "The event is not an object; it was skipped.");
      return;
    }
    const eventId: string | number =
      typeof raw.id === "number" || typeof raw.id === "string" ? raw.id : index;
    const location: ImportLocation = { index, eventId, ...(line === undefined ? {} : { line }) };
    const timestamp = sourceTimestamp(raw.timestamp, lastTimestamp);
    lastTimestamp = timestamp;
    const args = isRecord(raw.args) ? raw.args : raw;
    const action = typeof raw.action === "string" ? raw.action : undefined;
    const observation = typeof raw.observation === "string" ? raw.observation : undefined;
    const source =
      typeof raw.source === "string"
        ? raw.source
        : action === "message" && !seenUserMessage
          ? "user"
          : "agent";
    const kind = action ?? observation;
    if (kind === undefined) {
      draft.counts.invalid++;
      reportProblem(
        draft,
        "invalid_event",
        location,
        "The event is neither an action nor an observation; it was skipped.",
      );
      return;
    }
    if (action === "system") {
      const text =
        typeof args.content === "string" ? args.content : typeof raw.message === "string" ? raw.message : "";
      draft.system = draft.system === undefined ? text : `${draft.system}\n\n${text}`;
      return;
    }
    const idBase = `openhands-${line === undefined ? "" : `${line}-`}${eventId}`;
    if (kind === "condensation" || kind === "summarize") {
      if (convertCondensation(raw, args, action !== undefined, location, timestamp, idBase)) return;
    }
    if (source === "environment" || BOOKKEEPING.has(kind)) {
      countSkipped(draft, `${source}:${action ? "action" : "observation"}:${kind}`);
      return;
    }
    const metadata = isRecord(raw.tool_call_metadata) ? raw.tool_call_metadata : undefined;

    if (action === "message") {
      const text =
        typeof args.content === "string" ? args.content : typeof raw.message === "string" ? raw.message : "";
      const images = Array.isArray(args.image_urls)
        ? args.image_urls.filter((url) => typeof url === "string")
        : [];
      const content: ContentBlock[] = [
        ...textBlocks(text),
        ...images.map((url): ContentBlock => ({ type: "image", source: { type: "url", url } })),
      ];
      if (source === "user") {
        seenUserMessage = true;
        turnFor("user", location, timestamp, idBase).content.push(...content);
      } else {
        turnFor("assistant", location, timestamp, idBase).content.push(...content);
      }
      return;
    }

    if (action !== undefined) {
      if (metadata) {
        convertToolCallAction(raw, args, metadata, location, timestamp, idBase);
        return;
      }
      const answered = events
        .slice(index + 1)
        .some((next) => isRecord(next) && answersAction(next, raw, eventId));
      const thought = typeof args.thought === "string" ? args.thought : "";
      const message = turnFor("assistant", location, timestamp, idBase);
      if (thought.length > 0) message.content.push({ type: "text", text: thought });
      if (answered) {
        const toolUseId = idBase;
        const input = Object.fromEntries(
          Object.entries(args).filter(
            ([key]) => !["thought", "action", "id", "timestamp", "source", "message"].includes(key),
          ),
        );
        message.content.push({ type: "tool_use", id: toolUseId, name: action, input });
        actionToolIds.set(eventId, toolUseId);
        unanswered.push({ toolUseId, action });
      } else if (thought.length === 0) {
        const text = finalText(args, raw);
        if (text.length > 0) message.content.push({ type: "text", text });
      }
      return;
    }

    // An observation: find the tool call it answers.
    const toolUseId =
      (metadata && typeof metadata.tool_call_id === "string" ? metadata.tool_call_id : undefined) ??
      (raw.cause !== undefined ? actionToolIds.get(raw.cause as string | number) : undefined) ??
      (raw.cause === undefined && raw.source === undefined
        ? positionalMatch(unanswered, observation!)
        : undefined);
    const text = observationText(raw, args);
    const isError = observation === "error";
    if (toolUseId === undefined) {
      turnFor("user", location, timestamp, idBase).content.push({
        type: "text",
        text: text.length > 0 ? text : `[${observation}]`,
      });
      return;
    }
    const index2 = unanswered.findIndex((item) => item.toolUseId === toolUseId);
    if (index2 >= 0) unanswered.splice(index2, 1);
    const result: ContentBlock = { type: "tool_result", tool_use_id: toolUseId, content: text };
    if (isError) result.is_error = true;
    turnFor("user", location, timestamp, idBase).content.push(result);
  });

  function convertToolCallAction(
    raw: Record<string, unknown>,
    args: Record<string, unknown>,
    metadata: Record<string, unknown>,
    location: ImportLocation,
    timestamp: string,
    idBase: string,
  ): void {
    const toolCallId = typeof metadata.tool_call_id === "string" ? metadata.tool_call_id : idBase;
    const response = isRecord(metadata.model_response) ? metadata.model_response : {};
    const responseId = typeof response.id === "string" ? response.id : `response-${toolCallId}`;
    const eventId = location.eventId!;
    actionToolIds.set(eventId, toolCallId);
    const current = newestAssistant(turns);
    let message: Message;
    if (current && current.responseId === responseId) {
      message = current;
      draft.counts.mergedSourceItems++;
    } else {
      message = newMessage("assistant", location, timestamp, idBase);
      message.responseId = responseId;
      const choice =
        Array.isArray(response.choices) && isRecord(response.choices[0]) ? response.choices[0] : {};
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
    if (!message.content.some((block) => block.type === "tool_use" && block.id === toolCallId)) {
      const name = typeof metadata.function_name === "string" ? metadata.function_name : String(raw.action);
      const input = Object.fromEntries(Object.entries(args).filter(([key]) => key !== "thought"));
      message.content.push({
        type: "tool_use",
        id: toolCallId,
        name,
        input: parseArguments(input, location, draft),
      });
    }
  }

  /**
   * A condensation that carries a summary becomes a compact boundary, a compact summary entry and the summary
   * as a meta user message opening the next segment. Events OpenHands keeps in its view (the first events, those
   * after the forgotten range) are listed by message id in the boundary's `preservedSegment`, not copied. A
   * condensation without a summary only forgets events: it becomes a `layer_decision`. Returns false when the
   * event is neither (it is then counted as bookkeeping).
   */
  function convertCondensation(
    raw: Record<string, unknown>,
    args: Record<string, unknown>,
    isAction: boolean,
    location: ImportLocation,
    timestamp: string,
    idBase: string,
  ): boolean {
    const summary = isAction
      ? typeof args.summary === "string"
        ? args.summary
        : undefined
      : observationText(raw, args);
    const forgotten = forgottenEventIds(args);
    if (summary === undefined || summary.trim().length === 0) {
      if (!isAction || forgotten === undefined) return false;
      const messageIds = turns
        .filter((turn) => turn.location.eventId !== undefined && forgotten.has(String(turn.location.eventId)))
        .map((turn) => turn.message.id);
      sequence.push({
        kind: "entry",
        entry: {
          v: TRANSCRIPT_FORMAT_VERSION,
          type: "layer_decision",
          id: `${idBase}-condensation`,
          timestamp,
          layer: "openhands-condenser",
          edits: [
            {
              kind: "forget_events",
              ...(messageIds.length > 0 ? { messageIds } : {}),
              details: { eventIds: [...forgotten], source: location },
            },
          ],
        },
      });
      countSkipped(draft, "agent:action:condensation(no summary)");
      return true;
    }
    if (!isAction && summary === lastSummary) {
      // The observation that repeats the summary of the condensation action just converted.
      draft.counts.mergedSourceItems++;
      return true;
    }
    lastSummary = summary;
    const kept =
      forgotten === undefined
        ? []
        : turns.filter(
            (turn) => turn.location.eventId === undefined || !forgotten.has(String(turn.location.eventId)),
          );
    const previous = turns[turns.length - 1];
    const boundaryId = `${idBase}-boundary`;
    sequence.push({
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
    sequence.push({
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
    const message = newMessage("user", location, timestamp, idBase);
    message.content.push({ type: "text", text: summary });
    message.isMeta = true;
    message.isCompactSummary = true;
    return true;
  }

  draft.items.push(...sequence);
  return finishImport(draft);
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
