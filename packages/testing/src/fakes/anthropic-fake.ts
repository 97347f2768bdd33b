import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  applyContextManagement,
  countWireTokens,
  type WireBody,
} from "./anthropic-fake-context-management.ts";
import {
  type AnthropicFakeReply,
  AnthropicReplyBuilder,
  errorWire,
  sendError,
  sendJson,
  unsignedThinkingPath,
  writeFrame,
  writeStream,
} from "./anthropic-fake-wire.ts";
import {
  closeHttpServer,
  delay,
  type FakeHttpRequest,
  fakeRequestListener,
  hangUntilClosed,
  sendGatewayPage,
} from "./fake-http.ts";
import type {
  FakeError,
  FakeHang,
  FakeProviderServer,
  FakeServerOptions,
  RecordedRequest,
} from "./fake-script.ts";
import { cutAt, type FakeResponder, isBadSuccess, nextStep } from "./fake-script.ts";

export type { AnthropicFakeReply } from "./anthropic-fake-wire.ts";

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

/** The fake's script and routing: one instance per server. */
class AnthropicFakeHandler {
  readonly requests: RecordedRequest[] = [];
  readonly queue: AnthropicFakeStep[] = [];
  readonly models = new Map<string, AnthropicFakeModel>();
  contextLimit: number | undefined;
  responder: FakeResponder | undefined;
  private readonly defaultReply: AnthropicFakeReply;
  private readonly replies = new AnthropicReplyBuilder();

  constructor(options: FakeServerOptions) {
    this.contextLimit = options.contextLimit;
    this.responder = options.respond;
    this.defaultReply = options.defaultReply ?? { kind: "reply", text: "Hello from the Anthropic fake." };
  }

  /** Routes one request: records it, checks authentication, then serves a model, a count or a message. */
  async handle(received: FakeHttpRequest, response: ServerResponse): Promise<void> {
    const { method, headers, body } = received;
    const path = new URL(received.url, "http://127.0.0.1").pathname;
    const wire = (typeof body === "object" && body !== null ? body : {}) as WireBody;
    let operation = "unknown";
    if (method === "POST" && path === "/v1/messages")
      operation = wire.stream === true ? "stream" : "messages";
    else if (method === "POST" && path === "/v1/messages/count_tokens") operation = "count_tokens";
    else if (method === "GET" && path.startsWith("/v1/models/")) operation = "models";
    const recorded: RecordedRequest = { method, path, headers, body, operation };
    this.requests.push(recorded);

    if (!headers.authorization && !headers["x-api-key"]) {
      return sendError(response, 401, "authentication_error", "x-api-key header is required");
    }
    if (operation === "models")
      return this.model(decodeURIComponent(path.slice("/v1/models/".length)), response);
    if (operation === "unknown") {
      return sendError(response, 404, "not_found_error", `No route for ${method} ${path}`);
    }
    // Checked before the script, as the API validates before it answers: a refused request takes no step.
    const unsigned = unsignedThinkingPath(wire);
    if (unsigned !== undefined) {
      return sendError(response, 400, "invalid_request_error", `${unsigned}.signature: Field required`);
    }
    // Counting consumes a scripted failure (error or hang) but never a reply meant for a model call,
    // like the Bedrock and Vertex fakes, so a pre-flight count does not eat the next answer.
    const counting = operation === "count_tokens";
    const step =
      nextStep(this.queue, counting, this.responder, recorded) ?? (counting ? undefined : this.defaultReply);
    if (step?.kind === "hang") return hangUntilClosed(response, recorded);
    if (step?.kind === "reply" && step.holdUntil) await step.holdUntil;
    if (step?.delayMs) await delay(step.delayMs);
    if (counting) return this.countTokens(wire, step, response);
    return this.modelCall(operation === "stream", wire, step ?? this.defaultReply, response, recorded);
  }

  private model(id: string, response: ServerResponse): void {
    const model = this.models.get(id);
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
  }

  private countTokens(wire: WireBody, step: AnthropicFakeStep | undefined, response: ServerResponse): void {
    if (step?.kind === "error") {
      this.sendStepError(response, step, countWireTokens(wire));
      return;
    }
    const result: Record<string, unknown> = { input_tokens: applyContextManagement(wire).inputTokens };
    if (wire.context_management) {
      result.context_management = { original_input_tokens: countWireTokens(wire) };
    }
    sendJson(response, 200, result);
  }

  private async modelCall(
    isStream: boolean,
    wire: WireBody,
    step: Exclude<AnthropicFakeStep, FakeHang>,
    response: ServerResponse,
    recorded: RecordedRequest,
  ): Promise<void> {
    const counted = countWireTokens(wire);
    if (step.kind === "error" && isBadSuccess(step)) return this.badSuccess(isStream, wire, step, response);
    if (step.kind === "error" && !(isStream && step.midStreamAfterEvents !== undefined)) {
      if (step.error === "context_window_exceeded_stop") {
        const stopped: AnthropicFakeReply = {
          kind: "reply",
          text: "The context window",
          stopReason: "model_context_window_exceeded",
        };
        return this.answer(isStream, wire, stopped, response);
      }
      return this.sendStepError(response, step, counted);
    }
    if (this.contextLimit !== undefined && counted > this.contextLimit) {
      const message = `prompt is too long: ${counted} tokens > ${this.contextLimit} maximum`;
      return sendError(response, 400, "invalid_request_error", message);
    }
    if (step.kind === "error") {
      // A mid-stream error: a normal start, then the error frame.
      const frames = this.replies.frames(wire, {
        kind: "reply",
        text: "Partial answer that will be cut off.",
      });
      await writeStream(response, frames.slice(0, step.midStreamAfterEvents), 0);
      const { type, message } = errorWire(step, counted, this.contextLimit);
      writeFrame(response, { event: "error", data: { type: "error", error: { type, message } } });
      response.end();
      return;
    }
    return this.answer(isStream, wire, step, response, recorded);
  }

  private async answer(
    isStream: boolean,
    wire: WireBody,
    reply: AnthropicFakeReply,
    response: ServerResponse,
    recorded?: RecordedRequest,
  ): Promise<void> {
    if (!isStream) return sendJson(response, 200, this.replies.message(wire, reply));
    const frames = this.replies.frames(wire, reply);
    if (reply.hangAfterEvents !== undefined) {
      await writeStream(response, frames.slice(0, reply.hangAfterEvents), reply.delayMs ?? 0);
      return hangUntilClosed(response, recorded);
    }
    await writeStream(response, frames, reply.delayMs ?? 0);
    response.end();
  }

  /** A 200 the client cannot take as an answer: a gateway page, the other format, or a cut-short stream. */
  private async badSuccess(isStream: boolean, wire: WireBody, step: FakeError, response: ServerResponse) {
    const reply: AnthropicFakeReply = {
      kind: "reply",
      text: "An answer in a shape the client did not ask for.",
    };
    if (step.error === "html_page") return sendGatewayPage(response);
    if (step.error === "wrong_format" && isStream)
      return sendJson(response, 200, this.replies.message(wire, reply));
    if (!isStream && step.error === "truncated_stream") {
      const body = JSON.stringify(this.replies.message(wire, reply));
      response.writeHead(200, { "content-type": "application/json", "request-id": "req_fake" });
      response.end(body.slice(0, Math.floor(body.length / 2)));
      return;
    }
    const frames = this.replies.frames(wire, reply);
    const sent = step.error === "truncated_stream" ? frames.slice(0, cutAt(step, frames.length, 1)) : frames;
    await writeStream(response, sent, 0);
    response.end();
  }

  private sendStepError(response: ServerResponse, step: FakeError, counted: number): void {
    if (step.error === "malformed") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"id":"msg_broken","type":"message","content":[');
      return;
    }
    const { status, type, message } = errorWire(step, counted, this.contextLimit);
    const extraHeaders: Record<string, string> = {};
    if (step.error === "rate_limit" || step.retryAfterSeconds !== undefined) {
      extraHeaders["retry-after"] = String(step.retryAfterSeconds ?? 1);
    }
    sendError(response, status, type, message, extraHeaders);
  }
}

/**
 * Starts an in-process Anthropic Messages API on 127.0.0.1: `POST /v1/messages` (JSON or SSE with an
 * `event:` line on every frame), `POST /v1/messages/count_tokens`, `GET /v1/models/{id}`. It accepts both
 * `Authorization: Bearer` and `x-api-key`, any `anthropic-version`, and applies `context_management` edits
 * deterministically. Point `createAnthropicProvider({ baseURL: fake.url })` (or the SDK) at `fake.url`.
 */
export async function startAnthropicFake(options: FakeServerOptions = {}): Promise<AnthropicFakeServer> {
  const handler = new AnthropicFakeHandler(options);
  const server = createServer(
    fakeRequestListener(
      (received, response: ServerResponse) => handler.handle(received, response),
      (response, error) => sendError(response, 500, "api_error", `Fake server failure: ${String(error)}`),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    providerId: "anthropic",
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: handler.requests,
    enqueue(...steps) {
      handler.queue.push(...steps);
    },
    setContextLimit(limit) {
      handler.contextLimit = limit;
    },
    setResponder(responder) {
      handler.responder = responder;
    },
    setModel(model) {
      handler.models.set(model.id, model);
    },
    reset() {
      handler.queue.length = 0;
      handler.requests.length = 0;
      handler.contextLimit = undefined;
      handler.responder = undefined;
    },
    countTokens: countWireTokens,
    close: () => closeHttpServer(server),
  };
}
