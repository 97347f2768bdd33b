import type { ServerResponse } from "node:http";
import type { StopReason } from "@unforget/core";
import {
  applyContextManagement,
  type ContextManagementOutcome,
  type WireBlock,
  type WireBody,
} from "./anthropic-fake-context-management.ts";
import { delay, sendJson as sendFakeJson } from "./fake-http.ts";
import { type FakeError, type FakeReply, fakeTokenCount } from "./fake-script.ts";

/**
 * The Messages API wire formats the fake speaks: the JSON message, its SSE frames (each with its `event:`
 * line) and the error bodies. Pure builders and writers; the script and the routing stay in the server.
 */

/** A reply with the Anthropic-only parts a test may want to force (otherwise they are derived from the request). */
export interface AnthropicFakeReply extends FakeReply {
  /** Reported as `context_management.applied_edits`, in wire shape; replaces what the fake would compute. */
  appliedEdits?: Record<string, unknown>[];
  /** Put a server `compaction` block with this summary first in the content, as if `compact_*` had fired. */
  compaction?: string;
}

/** One SSE frame. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** An error as the API sends it. */
export interface AnthropicErrorWire {
  status: number;
  type: string;
  message: string;
}

/** The kinds answered with a 200 (or a 500 where a 200 makes no sense, as for a count). */
type SuccessShapedKind =
  | "malformed"
  | "context_window_exceeded_stop"
  | "html_page"
  | "wrong_format"
  | "truncated_stream";

const ERROR_WIRE: Record<Exclude<FakeError["error"], SuccessShapedKind>, AnthropicErrorWire> = {
  rate_limit: {
    status: 429,
    type: "rate_limit_error",
    message: "This request would exceed the rate limit for your organization. Please try again later.",
  },
  overloaded: { status: 529, type: "overloaded_error", message: "Overloaded" },
  server_error: { status: 500, type: "api_error", message: "Internal server error" },
  prompt_too_long: { status: 400, type: "invalid_request_error", message: "prompt is too long" },
  prompt_too_long_generic: { status: 400, type: "invalid_request_error", message: "prompt is too long" },
  request_too_large: {
    status: 413,
    type: "request_too_large",
    message: "Request exceeds the maximum allowed number of bytes.",
  },
  invalid_request: {
    status: 400,
    type: "invalid_request_error",
    message: "messages: text content blocks must be non-empty",
  },
  authentication: { status: 401, type: "authentication_error", message: "invalid x-api-key" },
};

/** The error body for a scripted error; a prompt-too-long states actual and limit tokens. */
export function errorWire(
  step: FakeError,
  counted: number,
  contextLimit: number | undefined,
): AnthropicErrorWire {
  if (!(step.error in ERROR_WIRE))
    return { status: 500, type: "api_error", message: "Internal server error" };
  const base = ERROR_WIRE[step.error as Exclude<FakeError["error"], SuccessShapedKind>];
  if (step.error === "prompt_too_long") {
    const limit = step.limitTokens ?? contextLimit ?? Math.max(1, counted - 1);
    const actual = step.actualTokens ?? Math.max(counted, limit + 1);
    return { ...base, message: `prompt is too long: ${actual} tokens > ${limit} maximum` };
  }
  return base;
}

/** Builds messages and their frames, numbering messages and tool calls without an id. */
export class AnthropicReplyBuilder {
  private messageCounter = 0;
  private toolCounter = 0;

  /** The message `POST /v1/messages` returns for a reply, with context-management edits applied. */
  message(wire: WireBody, reply: AnthropicFakeReply): Record<string, unknown> {
    this.messageCounter++;
    const outcome = applyContextManagement(wire);
    const content = this.content(reply, outcome);
    const paused = outcome.compaction?.pause === true && reply.compaction === undefined;
    const stopReason = paused
      ? "compaction"
      : stopReasonWire(reply.stopReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn"));
    const outputTokens = reply.usage?.outputTokens ?? Math.max(1, fakeTokenCount(content));
    const message: Record<string, unknown> = {
      id: `msg_fake_${this.messageCounter}`,
      type: "message",
      role: "assistant",
      model: wire.model ?? "claude-fake",
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: messageUsage(reply, outcome, outputTokens),
    };
    if (wire.context_management || reply.appliedEdits) {
      message.context_management = { applied_edits: reply.appliedEdits ?? outcome.appliedEdits };
    }
    return message;
  }

  /** The SSE frames for a reply, built from the same message the JSON endpoint would return. */
  frames(wire: WireBody, reply: AnthropicFakeReply): SseEvent[] {
    const message = this.message(wire, reply);
    const usage = message.usage as Record<string, unknown>;
    const frames: SseEvent[] = [
      {
        event: "message_start",
        data: {
          type: "message_start",
          message: {
            ...message,
            content: [],
            stop_reason: null,
            usage: { ...usage, output_tokens: 1, iterations: undefined },
          },
        },
      },
    ];
    (message.content as WireBlock[]).forEach((block, index) => {
      frames.push(...blockFrames(block, index));
      frames.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    });
    const deltaUsage: Record<string, unknown> = {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
    };
    if (usage.iterations) deltaUsage.iterations = usage.iterations;
    const delta: Record<string, unknown> = {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: deltaUsage,
    };
    if (message.context_management) delta.context_management = message.context_management;
    frames.push({ event: "message_delta", data: delta });
    frames.push({ event: "message_stop", data: { type: "message_stop" } });
    return frames;
  }

  private content(reply: AnthropicFakeReply, outcome: ContextManagementOutcome): WireBlock[] {
    const content: WireBlock[] = [];
    const compactionSummary = reply.compaction ?? outcome.compaction?.summary;
    if (compactionSummary !== undefined) content.push({ type: "compaction", content: compactionSummary });
    if (outcome.compaction?.pause && reply.compaction === undefined) return content;
    if (reply.thinking !== undefined) {
      content.push({ type: "thinking", thinking: reply.thinking, signature: fakeSignature(reply.thinking) });
    }
    if (reply.text !== undefined) content.push({ type: "text", text: reply.text });
    for (const call of reply.toolCalls ?? []) {
      this.toolCounter++;
      content.push({
        type: "tool_use",
        id: call.id ?? `toolu_fake_${this.toolCounter}`,
        name: call.name,
        input: call.input,
      });
    }
    for (const raw of reply.rawBlocks ?? []) content.push(structuredClone(raw) as WireBlock);
    return content;
  }
}

/** Writes `frames` as SSE (the head first, unless sent), `delayMs` apart; stops if the client went away. */
export async function writeStream(
  response: ServerResponse,
  frames: SseEvent[],
  delayMs: number,
): Promise<void> {
  if (!response.headersSent) {
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "request-id": "req_fake",
    });
  }
  for (const frame of frames) {
    if (response.destroyed) return;
    writeFrame(response, frame);
    if (delayMs > 0) await delay(delayMs);
  }
}

export function writeFrame(response: ServerResponse, frame: SseEvent): void {
  response.write(`event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`);
}

/** Every Anthropic response carries a `request-id` header. */
export function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  sendFakeJson(response, status, payload, { "request-id": "req_fake", ...headers });
}

export function sendError(
  response: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(response, status, { type: "error", error: { type, message }, request_id: "req_fake" }, headers);
}

function messageUsage(
  reply: AnthropicFakeReply,
  outcome: ContextManagementOutcome,
  outputTokens: number,
): Record<string, unknown> {
  const usage: Record<string, unknown> = {
    input_tokens: reply.usage?.inputTokens ?? outcome.inputTokens,
    cache_creation_input_tokens: reply.usage?.cacheCreationInputTokens ?? 0,
    cache_read_input_tokens: reply.usage?.cacheReadInputTokens ?? 0,
    cache_creation: {
      ephemeral_5m_input_tokens: reply.usage?.cacheCreationInputTokens ?? 0,
      ephemeral_1h_input_tokens: 0,
    },
    output_tokens: outputTokens,
    service_tier: "standard",
  };
  if (outcome.compaction) {
    usage.iterations = [
      {
        type: "compaction",
        input_tokens: outcome.compaction.inputTokensBefore,
        output_tokens: fakeTokenCount(outcome.compaction.summary),
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
      {
        type: "message",
        input_tokens: usage.input_tokens,
        output_tokens: outputTokens,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    ];
  }
  return usage;
}

/** The frames of one content block, its stop frame excluded. */
function blockFrames(block: WireBlock, index: number): SseEvent[] {
  switch (block.type) {
    case "text":
      return [
        blockStart(index, { type: "text", text: "" }),
        ...(index === 0 ? [{ event: "ping", data: { type: "ping" } }] : []),
        ...splitText(String(block.text)).map((piece) =>
          blockDelta(index, { type: "text_delta", text: piece }),
        ),
      ];
    case "thinking":
      return [
        blockStart(index, { type: "thinking", thinking: "", signature: "" }),
        ...splitText(String(block.thinking)).map((piece) =>
          blockDelta(index, { type: "thinking_delta", thinking: piece }),
        ),
        blockDelta(index, { type: "signature_delta", signature: String(block.signature) }),
      ];
    case "tool_use": {
      const json = JSON.stringify(block.input ?? {});
      const middle = Math.floor(json.length / 2);
      return [
        blockStart(index, { type: "tool_use", id: block.id, name: block.name, input: {} }),
        blockDelta(index, { type: "input_json_delta", partial_json: json.slice(0, middle) }),
        blockDelta(index, { type: "input_json_delta", partial_json: json.slice(middle) }),
      ];
    }
    case "compaction":
      return [
        blockStart(index, { type: "compaction", content: null }),
        blockDelta(index, { type: "compaction_delta", content: block.content }),
      ];
    default:
      return [blockStart(index, block)];
  }
}

function stopReasonWire(stopReason: StopReason): string {
  return stopReason === "other" ? "end_turn" : stopReason;
}

/** A deterministic stand-in for the opaque thinking signature, so equal replies carry equal signatures. */
function fakeSignature(thinking: string): string {
  return `sig_fake_${Buffer.from(thinking).toString("base64url").slice(0, 24)}`;
}

function blockStart(index: number, block: Record<string, unknown>): SseEvent {
  return { event: "content_block_start", data: { type: "content_block_start", index, content_block: block } };
}

function blockDelta(index: number, delta: Record<string, unknown>): SseEvent {
  return { event: "content_block_delta", data: { type: "content_block_delta", index, delta } };
}

/** Splits text into up to three pieces so streams really carry several deltas. */
function splitText(text: string): string[] {
  if (text.length < 3) return [text];
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)].filter(
    (piece) => piece !== "",
  );
}

/**
 * Where the first thinking block without a signature is (`messages.1.content.0.thinking`), as the API's
 * error names it: the real API refuses a thinking block that does not carry the signature it was sent with.
 */
export function unsignedThinkingPath(wire: { messages?: unknown }): string | undefined {
  const messages = Array.isArray(wire.messages) ? wire.messages : [];
  for (const [index, message] of messages.entries()) {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const [position, block] of content.entries()) {
      const { type, signature } = (block ?? {}) as { type?: unknown; signature?: unknown };
      if (type === "thinking" && (typeof signature !== "string" || signature === "")) {
        return `messages.${index}.content.${position}.thinking`;
      }
    }
  }
  return undefined;
}
