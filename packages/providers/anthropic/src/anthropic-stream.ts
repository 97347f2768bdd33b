import type {
  AppliedContextEdit,
  ContentBlock,
  ModelResponse,
  ModelStreamEvent,
  StopReason,
  TextBlock,
  UnknownBlock,
  Usage,
} from "@unforget/core";

const KNOWN_STOP_REASONS: ReadonlySet<string> = new Set([
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
]);

/**
 * Translates raw Messages API stream events into core stream events, one event at a time. Blocks this
 * version does not model (a server `compaction` block, server tool results, …) are buffered with their
 * deltas and emitted whole as an `UnknownBlock` when they stop, so the streamed content equals the
 * non-streamed content.
 */
export class AnthropicStreamTranslator {
  private readonly pendingUnknown = new Map<number, UnknownBlock["original"]>();

  /** Core events for one raw event (zero, one or two). */
  translate(raw: unknown): ModelStreamEvent[] {
    if (!isObject(raw)) return [];
    switch (raw.type) {
      case "message_start": {
        const message = isObject(raw.message) ? raw.message : {};
        return [
          {
            type: "message_start",
            id: String(message.id ?? ""),
            model: String(message.model ?? ""),
            usage: usageFromWire(message.usage),
          },
        ];
      }
      case "content_block_start": {
        const index = Number(raw.index);
        const block = contentBlockFromWire(raw.content_block);
        if (block.type === "unknown") {
          this.pendingUnknown.set(index, block.original);
          return [];
        }
        if (block.type === "tool_use") block.input = {};
        return [{ type: "block_start", index, block }];
      }
      case "content_block_delta": {
        const index = Number(raw.index);
        const delta = isObject(raw.delta) ? raw.delta : {};
        const pending = this.pendingUnknown.get(index);
        if (pending) {
          // e.g. compaction_delta {content}: append every string field to the block's field of that name.
          for (const [key, value] of Object.entries(delta)) {
            if (key === "type" || typeof value !== "string") continue;
            const current = pending[key];
            pending[key] = (typeof current === "string" ? current : "") + value;
          }
          return [];
        }
        switch (delta.type) {
          case "text_delta":
            return [{ type: "text_delta", index, text: String(delta.text ?? "") }];
          case "thinking_delta":
            return [{ type: "thinking_delta", index, thinking: String(delta.thinking ?? "") }];
          case "signature_delta":
            return [{ type: "signature_delta", index, signature: String(delta.signature ?? "") }];
          case "input_json_delta":
            return [{ type: "tool_input_delta", index, partialJson: String(delta.partial_json ?? "") }];
          default:
            return [];
        }
      }
      case "content_block_stop": {
        const index = Number(raw.index);
        const pending = this.pendingUnknown.get(index);
        if (pending) {
          this.pendingUnknown.delete(index);
          return [
            { type: "block_start", index, block: { type: "unknown", original: pending } },
            { type: "block_stop", index },
          ];
        }
        return [{ type: "block_stop", index }];
      }
      case "message_delta": {
        const delta = isObject(raw.delta) ? raw.delta : {};
        const event: Extract<ModelStreamEvent, { type: "message_delta" }> = { type: "message_delta" };
        if (typeof delta.stop_reason === "string") {
          event.stopReason = stopReasonFromWire(delta.stop_reason);
          event.rawStopReason = delta.stop_reason;
        }
        if (typeof delta.stop_sequence === "string") event.stopSequence = delta.stop_sequence;
        const usage = partialUsageFromWire(raw.usage);
        if (Object.keys(usage).length > 0) event.usage = usage;
        const applied = appliedEditsFromWire(raw.context_management);
        if (applied) event.appliedContextEdits = applied;
        return [event];
      }
      case "message_stop":
        return [{ type: "message_stop" }];
      default:
        // ping and event types this version does not know.
        return [];
    }
  }
}

/** A whole Messages API response → the core response (stop-reason checks are the runtime's). */
export function responseFromWire(raw: unknown): ModelResponse {
  const message = isObject(raw) ? raw : {};
  const response: ModelResponse = {
    id: String(message.id ?? ""),
    model: String(message.model ?? ""),
    role: "assistant",
    content: Array.isArray(message.content) ? message.content.map(contentBlockFromWire) : [],
    stopReason: stopReasonFromWire(message.stop_reason),
    usage: usageFromWire(message.usage),
  };
  if (typeof message.stop_reason === "string") response.rawStopReason = message.stop_reason;
  if (typeof message.stop_sequence === "string") response.stopSequence = message.stop_sequence;
  const applied = appliedEditsFromWire(message.context_management);
  if (applied) response.appliedContextEdits = applied;
  return response;
}

/** Messages API block → core block. Anything this version does not model becomes an `UnknownBlock`. */
export function contentBlockFromWire(raw: unknown): ContentBlock {
  if (!isObject(raw) || typeof raw.type !== "string") {
    return { type: "unknown", original: { type: "invalid", value: raw } };
  }
  switch (raw.type) {
    case "text": {
      if (typeof raw.text !== "string") break;
      const block: TextBlock = { type: "text", text: raw.text };
      if (Array.isArray(raw.citations) && raw.citations.length > 0) block.citations = raw.citations;
      return block;
    }
    case "tool_use":
      if (typeof raw.id !== "string" || typeof raw.name !== "string") break;
      return { type: "tool_use", id: raw.id, name: raw.name, input: raw.input ?? {} };
    case "thinking": {
      if (typeof raw.thinking !== "string") break;
      return typeof raw.signature === "string" && raw.signature !== ""
        ? { type: "thinking", thinking: raw.thinking, signature: raw.signature }
        : { type: "thinking", thinking: raw.thinking };
    }
    case "redacted_thinking":
      if (typeof raw.data !== "string") break;
      return { type: "redacted_thinking", data: raw.data };
  }
  return { type: "unknown", original: structuredClone(raw) as { type: string; [key: string]: unknown } };
}

/** Wire usage → core usage; absent cache fields are 0. */
export function usageFromWire(raw: unknown): Usage {
  const usage = isObject(raw) ? raw : {};
  const read = (key: string) => (typeof usage[key] === "number" ? (usage[key] as number) : 0);
  return {
    inputTokens: read("input_tokens"),
    outputTokens: read("output_tokens"),
    cacheCreationInputTokens: read("cache_creation_input_tokens"),
    cacheReadInputTokens: read("cache_read_input_tokens"),
    ...usageExtrasFromWire(usage),
  };
}

/**
 * The parts of a usage the four totals leave out: the passes of a server compaction (`iterations`; cost
 * must sum them) and cache writes split by time-to-live.
 */
function usageExtrasFromWire(usage: Record<string, unknown>): Partial<Usage> {
  const extras: Partial<Usage> = {};
  if (Array.isArray(usage.iterations)) {
    extras.iterations = usage.iterations.filter(isObject).map((pass) => {
      const read = (key: string) => (typeof pass[key] === "number" ? (pass[key] as number) : 0);
      return {
        type: typeof pass.type === "string" ? pass.type : "message",
        inputTokens: read("input_tokens"),
        outputTokens: read("output_tokens"),
        cacheCreationInputTokens: read("cache_creation_input_tokens"),
        cacheReadInputTokens: read("cache_read_input_tokens"),
      };
    });
  }
  const creation = usage.cache_creation;
  if (isObject(creation)) {
    extras.cacheCreation = {
      ephemeral5mInputTokens:
        typeof creation.ephemeral_5m_input_tokens === "number" ? creation.ephemeral_5m_input_tokens : 0,
      ephemeral1hInputTokens:
        typeof creation.ephemeral_1h_input_tokens === "number" ? creation.ephemeral_1h_input_tokens : 0,
    };
  }
  return extras;
}

/** The usage fields a `message_delta` actually carried (later events replace earlier numbers). */
export function partialUsageFromWire(raw: unknown): Partial<Usage> {
  const usage = isObject(raw) ? raw : {};
  const partial: Partial<Usage> = {};
  if (typeof usage.input_tokens === "number") partial.inputTokens = usage.input_tokens;
  if (typeof usage.output_tokens === "number") partial.outputTokens = usage.output_tokens;
  if (typeof usage.cache_creation_input_tokens === "number") {
    partial.cacheCreationInputTokens = usage.cache_creation_input_tokens;
  }
  if (typeof usage.cache_read_input_tokens === "number")
    partial.cacheReadInputTokens = usage.cache_read_input_tokens;
  return { ...partial, ...usageExtrasFromWire(usage) };
}

/**
 * Wire stop reason → core stop reason. `compaction` (a server compaction paused the turn) asks the caller
 * to send the conversation again, which is what `pause_turn` means; the raw word is kept separately.
 */
export function stopReasonFromWire(raw: unknown): StopReason {
  if (typeof raw !== "string") return "other";
  if (KNOWN_STOP_REASONS.has(raw)) return raw as StopReason;
  if (raw === "compaction") return "pause_turn";
  return "other";
}

/** `context_management.applied_edits` → core's camelCase `AppliedContextEdit`s; undefined when not reported. */
export function appliedEditsFromWire(contextManagement: unknown): AppliedContextEdit[] | undefined {
  if (!isObject(contextManagement) || !Array.isArray(contextManagement.applied_edits)) return undefined;
  return contextManagement.applied_edits.filter(isObject).map((edit) => {
    const applied: AppliedContextEdit = { type: String(edit.type ?? "unknown") };
    for (const [key, value] of Object.entries(edit)) {
      if (key !== "type") applied[snakeToCamel(key)] = value;
    }
    return applied;
  });
}

function snakeToCamel(key: string): string {
  return key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
