import type {
  PostCompactEvent,
  PostSamplingEvent,
  PostToolUseEvent,
  PreCompactEvent,
  PreCompactResult,
  PreToolUseEvent,
  SessionEndEvent,
  SessionStartEvent,
  UserPromptSubmitEvent,
} from "../hook-events.ts";
import { isRecord } from "../is-record.ts";

/** What command hooks get from one event: what their matchers are tested against, and their stdin fields. */
export interface CommandPayload {
  /** Values the group matchers are tested against; undefined: every group runs. */
  matchValues: readonly string[] | undefined;
  /** The event's fields, sent on stdin after `session_id`, `transcript_path`, `cwd` and `hook_event_name`. */
  fields: Record<string, unknown>;
}

/** Claude Code knows only "manual" and "auto"; an emergency compaction is automatic. */
function claudeTrigger(trigger: PreCompactEvent["trigger"]): "manual" | "auto" {
  return trigger === "manual" ? "manual" : "auto";
}

/** Claude Code's PreCompact fields, plus ours (`unforget_…`, `tokens`, `threshold`). */
export function preCompactPayload(result: PreCompactResult, event: PreCompactEvent): CommandPayload {
  return {
    matchValues: [claudeTrigger(event.trigger), event.trigger],
    fields: {
      trigger: claudeTrigger(event.trigger),
      // What Claude Code sends: the user's own instructions, not what earlier plugins appended.
      custom_instructions: result.userInstructions ?? result.instructions,
      unforget_instructions: result.instructions,
      unforget_trigger: event.trigger,
      tokens: event.tokens,
      threshold: event.threshold,
    },
  };
}

/** Matched on the trigger and on the layer, so `"full|reactive"` selects the compactions that summarise. */
export function postCompactPayload(event: PostCompactEvent): CommandPayload {
  return {
    matchValues: [claudeTrigger(event.trigger), event.trigger, event.layer],
    fields: {
      trigger: claudeTrigger(event.trigger),
      unforget_trigger: event.trigger,
      layer: event.layer,
      tokens_before: event.tokensBefore,
      tokens_after: event.tokensAfter,
      // Left out of the JSON when the layer wrote no summary.
      compact_summary: event.summary,
      messages_summarized: event.messagesSummarized,
    },
  };
}

export function sessionStartPayload(event: SessionStartEvent): CommandPayload {
  return { matchValues: [event.source], fields: { source: event.source } };
}

export function sessionEndPayload(event: SessionEndEvent): CommandPayload {
  return { matchValues: [event.reason], fields: { reason: event.reason } };
}

export function userPromptSubmitPayload(event: UserPromptSubmitEvent): CommandPayload {
  return { matchValues: undefined, fields: { prompt: event.prompt } };
}

export function preToolUsePayload(event: PreToolUseEvent): CommandPayload {
  return {
    matchValues: [event.toolName],
    fields: { tool_name: event.toolName, tool_input: event.input, tool_use_id: event.toolUseId },
  };
}

export function postToolUsePayload(event: PostToolUseEvent): CommandPayload {
  return {
    matchValues: [event.toolName],
    fields: {
      tool_name: event.toolName,
      tool_input: event.input,
      tool_use_id: event.toolUseId,
      tool_response: { output: event.output, is_error: event.isError },
    },
  };
}

export function postSamplingPayload(event: PostSamplingEvent): CommandPayload {
  return {
    matchValues: undefined,
    fields: { message_id: event.messageId, context_tokens: event.contextTokens, tool_calls: event.toolCalls },
  };
}

function snakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/**
 * A declared event as command hooks see it: its own top-level fields in snake_case (`taskId` → `task_id`;
 * nested values are the event's data and stay as they are). `sessionId` and `transcriptId` are already sent
 * as `session_id` and `transcript_path`.
 */
export function declaredEventPayload(
  event: unknown,
  matcherValue: ((event: unknown) => string | undefined) | undefined,
): CommandPayload {
  const fields: Record<string, unknown> = {};
  if (isRecord(event)) {
    for (const [key, value] of Object.entries(event)) {
      if (key !== "sessionId" && key !== "transcriptId") fields[snakeCase(key)] = value;
    }
  } else {
    fields.event = event;
  }
  const value = matcherValue?.(event);
  return { matchValues: matcherValue === undefined ? undefined : value === undefined ? [] : [value], fields };
}
