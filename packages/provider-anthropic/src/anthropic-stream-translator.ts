import type { ModelStreamEvent, UnknownBlock } from "@unforget/core";
import {
  appliedEditsFromWire,
  contentBlockFromWire,
  partialUsageFromWire,
  stopReasonFromWire,
  usageFromWire,
} from "./anthropic-wire.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

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
