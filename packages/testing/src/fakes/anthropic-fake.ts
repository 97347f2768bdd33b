import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { StopReason } from "@unforget/core";
import {
  closeHttpServer,
  delay,
  type FakeHttpRequest,
  fakeRequestListener,
  hangUntilClosed,
  sendJson as sendFakeJson,
} from "./fake-http.ts";
import {
  type FakeError,
  type FakeHang,
  type FakeProviderServer,
  type FakeReply,
  type FakeServerOptions,
  fakeTokenCount,
  type RecordedRequest,
  takeStep,
} from "./fake-script.ts";
import { isRecord } from "./is-record.ts";

/** A reply with the Anthropic-only parts a test may want to force (otherwise they are derived from the request). */
export interface AnthropicFakeReply extends FakeReply {
  /** Reported as `context_management.applied_edits`, in wire shape; replaces what the fake would compute. */
  appliedEdits?: Record<string, unknown>[];
  /** Put a server `compaction` block with this summary first in the content, as if `compact_*` had fired. */
  compaction?: string;
}

export type AnthropicFakeStep = AnthropicFakeReply | FakeError | FakeHang;

/** A model the fake serves on `GET /v1/models/{id}`. */
export interface AnthropicFakeModel {
  id: string;
  /** Reported as `max_input_tokens`. */
  maxInputTokens: number;
  /** Reported as `max_tokens`. */
  maxTokens: number;
  displayName?: string;
}

export interface AnthropicFakeServer extends FakeProviderServer {
  /** Appends steps; replies may carry Anthropic extras (applied edits, a compaction block). */
  enqueue(...steps: AnthropicFakeStep[]): void;
  /** Registers (or replaces) a model served by `GET /v1/models/{id}`; unknown ids get a 404. */
  setModel(model: AnthropicFakeModel): void;
}

const DEFAULT_CLEAR_TOOL_USES_TRIGGER = 100_000;
const DEFAULT_CLEAR_TOOL_USES_KEEP = 3;
const DEFAULT_COMPACT_TRIGGER = 150_000;
const CLEARED_TOOL_RESULT_TEXT = "[cleared by context management]";

type WireBlock = Record<string, unknown> & { type: string };
type WireMessage = { role: string; content: string | WireBlock[] };
type WireBody = {
  model?: string;
  system?: unknown;
  messages?: WireMessage[];
  tools?: unknown[];
  stream?: boolean;
  context_management?: { edits?: Record<string, unknown>[] };
};

type SseEvent = { event: string; data: Record<string, unknown> };

/** The request parts the fake counts: system, messages and tools (never max_tokens or other settings). */
function countWireTokens(body: unknown): number {
  const wire = (body ?? {}) as WireBody;
  return fakeTokenCount([wire.system ?? "", wire.messages ?? [], wire.tools ?? []]);
}

interface ContextManagementOutcome {
  /** Tokens the model "saw" after the edits. */
  inputTokens: number;
  appliedEdits: Record<string, unknown>[];
  compaction?: { summary: string; inputTokensBefore: number; pause: boolean };
}

/**
 * Applies `context_management` edits the way the API reports them, deterministically: tool results beyond
 * the kept ones are cleared once the trigger is exceeded, thinking blocks of older turns are cleared, and a
 * `compact_*` edit whose trigger is exceeded produces a compaction block summarising the conversation.
 */
function applyContextManagement(body: WireBody): ContextManagementOutcome {
  const edits = body.context_management?.edits ?? [];
  let working: WireBody = structuredClone(body);
  const appliedEdits: Record<string, unknown>[] = [];
  let compaction: ContextManagementOutcome["compaction"];
  for (const edit of edits) {
    const type = String(edit.type ?? "");
    const before = countWireTokens(working);
    if (type.startsWith("clear_tool_uses_")) {
      const trigger = numberField(edit.trigger, "value") ?? DEFAULT_CLEAR_TOOL_USES_TRIGGER;
      if (before <= trigger) continue;
      const keep = numberField(edit.keep, "value") ?? DEFAULT_CLEAR_TOOL_USES_KEEP;
      const excluded = new Set(Array.isArray(edit.exclude_tools) ? edit.exclude_tools.map(String) : []);
      const toolNames = new Map<string, string>();
      const results: WireBlock[] = [];
      for (const message of working.messages ?? []) {
        if (typeof message.content === "string") continue;
        for (const block of message.content) {
          if (block.type === "tool_use") toolNames.set(String(block.id), String(block.name));
          if (block.type === "tool_result" && !excluded.has(toolNames.get(String(block.tool_use_id)) ?? "")) {
            results.push(block);
          }
        }
      }
      const cleared = results.slice(0, Math.max(0, results.length - keep));
      for (const block of cleared) block.content = CLEARED_TOOL_RESULT_TEXT;
      if (cleared.length === 0) continue;
      appliedEdits.push({
        type,
        cleared_tool_uses: cleared.length,
        cleared_input_tokens: before - countWireTokens(working),
      });
    } else if (type.startsWith("clear_thinking_")) {
      const keepSetting = edit.keep;
      if (keepSetting === "all" || (isRecord(keepSetting) && keepSetting.type === "all")) continue;
      const keep = numberField(keepSetting, "value") ?? 1;
      const turns = (working.messages ?? []).filter(
        (message) =>
          message.role === "assistant" &&
          Array.isArray(message.content) &&
          message.content.some((block) => block.type === "thinking" || block.type === "redacted_thinking"),
      );
      const clearedTurns = turns.slice(0, Math.max(0, turns.length - keep));
      for (const message of clearedTurns) {
        message.content = (message.content as WireBlock[]).filter(
          (block) => block.type !== "thinking" && block.type !== "redacted_thinking",
        );
      }
      if (clearedTurns.length === 0) continue;
      appliedEdits.push({
        type,
        cleared_thinking_turns: clearedTurns.length,
        cleared_input_tokens: before - countWireTokens(working),
      });
    } else if (type.startsWith("compact_")) {
      const trigger = numberField(edit.trigger, "value") ?? DEFAULT_COMPACT_TRIGGER;
      if (before <= trigger) continue;
      const messages = working.messages ?? [];
      const summary = `Summary of ${messages.length} earlier messages (fake compaction).`;
      const last = messages.at(-1);
      working = {
        ...working,
        messages: [
          { role: "user", content: [{ type: "compaction", content: summary }] },
          ...(last && last.role === "user" ? [last] : []),
        ],
      };
      compaction = { summary, inputTokensBefore: before, pause: edit.pause_after_compaction === true };
    }
  }
  const outcome: ContextManagementOutcome = { inputTokens: countWireTokens(working), appliedEdits };
  if (compaction) outcome.compaction = compaction;
  return outcome;
}

function numberField(value: unknown, key: string): number | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return typeof field === "number" ? field : undefined;
}

const ERROR_WIRE: Record<
  Exclude<FakeError["error"], "malformed" | "context_window_exceeded_stop">,
  { status: number; type: string; message: string }
> = {
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

function stopReasonWire(stopReason: StopReason): string {
  return stopReason === "other" ? "end_turn" : stopReason;
}

/**
 * Starts an in-process Anthropic Messages API on 127.0.0.1: `POST /v1/messages` (JSON or SSE with an
 * `event:` line on every frame), `POST /v1/messages/count_tokens`, `GET /v1/models/{id}`. It accepts both
 * `Authorization: Bearer` and `x-api-key`, any `anthropic-version`, and applies `context_management` edits
 * deterministically. Point `createAnthropicProvider({ baseURL: fake.url })` (or the SDK) at `fake.url`.
 */
export async function startAnthropicFake(options: FakeServerOptions = {}): Promise<AnthropicFakeServer> {
  const requests: RecordedRequest[] = [];
  const queue: AnthropicFakeStep[] = [];
  const models = new Map<string, AnthropicFakeModel>();
  let contextLimit = options.contextLimit;
  let messageCounter = 0;
  let toolCounter = 0;
  const defaultReply: AnthropicFakeReply = options.defaultReply ?? {
    kind: "reply",
    text: "Hello from the Anthropic fake.",
  };

  const server = createServer(
    fakeRequestListener(handle, (response, error) =>
      sendError(response, 500, "api_error", `Fake server failure: ${String(error)}`),
    ),
  );

  async function handle(received: FakeHttpRequest, response: ServerResponse): Promise<void> {
    const { method, headers, body } = received;
    const path = new URL(received.url, "http://127.0.0.1").pathname;
    const wire = (isRecord(body) ? body : {}) as WireBody;
    let operation = "unknown";
    if (method === "POST" && path === "/v1/messages")
      operation = wire.stream === true ? "stream" : "messages";
    else if (method === "POST" && path === "/v1/messages/count_tokens") operation = "count_tokens";
    else if (method === "GET" && path.startsWith("/v1/models/")) operation = "models";
    const recorded: RecordedRequest = { method, path, headers, body, operation };
    requests.push(recorded);

    if (!headers.authorization && !headers["x-api-key"]) {
      sendError(response, 401, "authentication_error", "x-api-key header is required");
      return;
    }
    if (operation === "models") {
      const id = decodeURIComponent(path.slice("/v1/models/".length));
      const model = models.get(id);
      if (!model) {
        sendError(response, 404, "not_found_error", `model: ${id}`);
        return;
      }
      sendJson(response, 200, {
        type: "model",
        id: model.id,
        display_name: model.displayName ?? model.id,
        created_at: "2026-01-01T00:00:00Z",
        max_input_tokens: model.maxInputTokens,
        max_tokens: model.maxTokens,
      });
      return;
    }
    if (operation === "unknown") {
      sendError(response, 404, "not_found_error", `No route for ${method} ${path}`);
      return;
    }

    // Counting consumes a scripted failure (error or hang) but never a reply meant for a model call,
    // like the Bedrock and Vertex fakes, so a pre-flight count does not eat the next answer.
    const counting = operation === "count_tokens";
    const step: AnthropicFakeStep =
      takeStep(queue, counting) ?? (counting ? { kind: "reply" } : defaultReply);
    if (step.kind === "hang") {
      await hangUntilClosed(response, recorded);
      return;
    }
    if (step.delayMs) await delay(step.delayMs);

    if (operation === "count_tokens") {
      if (step.kind === "error") {
        sendStepError(response, step, countWireTokens(wire));
        return;
      }
      const counted = applyContextManagement(wire);
      const result: Record<string, unknown> = { input_tokens: counted.inputTokens };
      if (wire.context_management) {
        result.context_management = { original_input_tokens: countWireTokens(wire) };
      }
      sendJson(response, 200, result);
      return;
    }

    const counted = countWireTokens(wire);
    if (step.kind === "error" && !(operation === "stream" && step.midStreamAfterEvents !== undefined)) {
      if (step.error === "context_window_exceeded_stop") {
        answer(response, operation, wire, {
          kind: "reply",
          text: "The context window",
          stopReason: "model_context_window_exceeded",
        });
        return;
      }
      sendStepError(response, step, counted);
      return;
    }
    if (contextLimit !== undefined && counted > contextLimit) {
      sendError(
        response,
        400,
        "invalid_request_error",
        `prompt is too long: ${counted} tokens > ${contextLimit} maximum`,
      );
      return;
    }
    if (step.kind === "error") {
      // A mid-stream error: a normal start, then the error frame.
      const frames = buildFrames(wire, { kind: "reply", text: "Partial answer that will be cut off." });
      await writeStream(response, frames.slice(0, step.midStreamAfterEvents), 0);
      const { type, message } = errorWire(step, counted);
      writeFrame(response, { event: "error", data: { type: "error", error: { type, message } } });
      response.end();
      return;
    }
    answer(response, operation, wire, step);
  }

  function answer(
    response: ServerResponse,
    operation: string,
    wire: WireBody,
    reply: AnthropicFakeReply,
  ): void {
    if (operation === "stream") {
      void writeStream(response, buildFrames(wire, reply), reply.delayMs ?? 0).then(() => response.end());
      return;
    }
    sendJson(response, 200, buildMessage(wire, reply));
  }

  function errorWire(step: FakeError, counted: number): { status: number; type: string; message: string } {
    if (step.error === "malformed" || step.error === "context_window_exceeded_stop") {
      return { status: 500, type: "api_error", message: "Internal server error" };
    }
    const base = ERROR_WIRE[step.error];
    if (step.error === "prompt_too_long") {
      const limit = step.limitTokens ?? contextLimit ?? Math.max(1, counted - 1);
      const actual = step.actualTokens ?? Math.max(counted, limit + 1);
      return { ...base, message: `prompt is too long: ${actual} tokens > ${limit} maximum` };
    }
    return base;
  }

  function sendStepError(response: ServerResponse, step: FakeError, counted: number): void {
    if (step.error === "malformed") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"id":"msg_broken","type":"message","content":[');
      return;
    }
    const { status, type, message } = errorWire(step, counted);
    const extraHeaders: Record<string, string> = {};
    if (step.error === "rate_limit" || step.retryAfterSeconds !== undefined) {
      extraHeaders["retry-after"] = String(step.retryAfterSeconds ?? 1);
    }
    sendError(response, status, type, message, extraHeaders);
  }

  function buildContent(
    wire: WireBody,
    reply: AnthropicFakeReply,
    outcome: ContextManagementOutcome,
  ): WireBlock[] {
    const content: WireBlock[] = [];
    const compactionSummary = reply.compaction ?? outcome.compaction?.summary;
    if (compactionSummary !== undefined) content.push({ type: "compaction", content: compactionSummary });
    if (outcome.compaction?.pause && reply.compaction === undefined) return content;
    if (reply.thinking !== undefined) {
      content.push({ type: "thinking", thinking: reply.thinking, signature: fakeSignature(reply.thinking) });
    }
    if (reply.text !== undefined) content.push({ type: "text", text: reply.text });
    for (const call of reply.toolCalls ?? []) {
      toolCounter++;
      content.push({
        type: "tool_use",
        id: call.id ?? `toolu_fake_${toolCounter}`,
        name: call.name,
        input: call.input,
      });
    }
    for (const raw of reply.rawBlocks ?? []) content.push(structuredClone(raw) as WireBlock);
    void wire;
    return content;
  }

  function buildMessage(wire: WireBody, reply: AnthropicFakeReply): Record<string, unknown> {
    messageCounter++;
    const outcome = applyContextManagement(wire);
    const content = buildContent(wire, reply, outcome);
    const paused = outcome.compaction?.pause === true && reply.compaction === undefined;
    const stopReason = paused
      ? "compaction"
      : stopReasonWire(reply.stopReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn"));
    const outputTokens = reply.usage?.outputTokens ?? Math.max(1, fakeTokenCount(content));
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
    const message: Record<string, unknown> = {
      id: `msg_fake_${messageCounter}`,
      type: "message",
      role: "assistant",
      model: wire.model ?? "claude-fake",
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    };
    if (wire.context_management || reply.appliedEdits) {
      message.context_management = { applied_edits: reply.appliedEdits ?? outcome.appliedEdits };
    }
    return message;
  }

  /** The SSE frames for a reply, built from the same message the JSON endpoint would return. */
  function buildFrames(wire: WireBody, reply: AnthropicFakeReply): SseEvent[] {
    const message = buildMessage(wire, reply);
    const usage = message.usage as Record<string, unknown>;
    const content = message.content as WireBlock[];
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
    content.forEach((block, index) => {
      if (block.type === "text") {
        frames.push(blockStart(index, { type: "text", text: "" }));
        if (index === 0) frames.push({ event: "ping", data: { type: "ping" } });
        for (const piece of splitText(String(block.text))) {
          frames.push(blockDelta(index, { type: "text_delta", text: piece }));
        }
      } else if (block.type === "thinking") {
        frames.push(blockStart(index, { type: "thinking", thinking: "", signature: "" }));
        for (const piece of splitText(String(block.thinking))) {
          frames.push(blockDelta(index, { type: "thinking_delta", thinking: piece }));
        }
        frames.push(blockDelta(index, { type: "signature_delta", signature: String(block.signature) }));
      } else if (block.type === "tool_use") {
        frames.push(blockStart(index, { type: "tool_use", id: block.id, name: block.name, input: {} }));
        const json = JSON.stringify(block.input ?? {});
        const middle = Math.floor(json.length / 2);
        frames.push(blockDelta(index, { type: "input_json_delta", partial_json: json.slice(0, middle) }));
        frames.push(blockDelta(index, { type: "input_json_delta", partial_json: json.slice(middle) }));
      } else if (block.type === "compaction") {
        frames.push(blockStart(index, { type: "compaction", content: null }));
        frames.push(blockDelta(index, { type: "compaction_delta", content: block.content }));
      } else {
        frames.push(blockStart(index, block));
      }
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

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    providerId: "anthropic",
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue(...steps) {
      queue.push(...steps);
    },
    setContextLimit(limit) {
      contextLimit = limit;
    },
    setModel(model) {
      models.set(model.id, model);
    },
    countTokens: countWireTokens,
    close: () => closeHttpServer(server),
  };
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

function writeFrame(response: ServerResponse, frame: SseEvent): void {
  response.write(`event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`);
}

async function writeStream(response: ServerResponse, frames: SseEvent[], delayMs: number): Promise<void> {
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

/** Every Anthropic response carries a `request-id` header. */
function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  sendFakeJson(response, status, payload, { "request-id": "req_fake", ...headers });
}

function sendError(
  response: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(response, status, { type: "error", error: { type, message }, request_id: "req_fake" }, headers);
}
