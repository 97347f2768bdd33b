import type { ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
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
  FakeProviderServer,
  FakeReply,
  FakeServerOptions,
  FakeStep,
  RecordedRequest,
} from "./fake-script.ts";
import { cutAt, type FakeResponder, isBadSuccess, nextStep } from "./fake-script.ts";
import { VERTEX_FAKE_CA_CERTIFICATE, VERTEX_FAKE_PRIVATE_KEY } from "./vertex-fake-tls.ts";
import {
  buildChunks,
  buildResponse,
  countWireTokens,
  errorBody,
  isRecord,
  overflowMessage,
  sendError,
  sendJson,
  sendStepError,
  type WireObject,
  writeData,
  writeStreamHead,
} from "./vertex-fake-wire.ts";

export { VERTEX_FAKE_CA_CERTIFICATE, writeVertexFakeCaCertificate } from "./vertex-fake-tls.ts";

/** What the Vertex fake adds to the shared fake interface. */
export interface VertexFakeServer extends FakeProviderServer {
  /** `host:port` to pass as `apiEndpoint` (the SDK prepends `https://` itself). */
  readonly endpoint: string;
  /** PEM of the certificate the fake serves; trust it through `NODE_EXTRA_CA_CERTS`. */
  readonly caCertificate: string;
  /** Bearer token the fake expects when `requireAccessToken` was given; any token is accepted otherwise. */
  readonly accessToken: string | undefined;
}

export interface VertexFakeOptions extends FakeServerOptions {
  /** Reject requests whose `Authorization` is not `Bearer <this>` with 401 UNAUTHENTICATED. */
  requireAccessToken?: string;
}

const ROUTE =
  /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** The fake's script and routing: one instance per server. */
class VertexFakeHandler {
  readonly requests: RecordedRequest[] = [];
  readonly queue: FakeStep[] = [];
  contextLimit: number | undefined;
  responder: FakeResponder | undefined;
  private readonly options: VertexFakeOptions;
  private responseCounter = 0;

  constructor(options: VertexFakeOptions) {
    this.options = options;
    this.contextLimit = options.contextLimit;
    this.responder = options.respond;
  }

  /** Routes one request: records it, checks the token, then counts or answers from the script. */
  async handle(received: FakeHttpRequest, response: ServerResponse): Promise<void> {
    const { method, headers, body } = received;
    const url = new URL(received.url, "https://127.0.0.1");
    const match = ROUTE.exec(url.pathname);
    const operation = method === "POST" && match?.[6] ? match[6] : "unknown";
    const recorded: RecordedRequest = {
      method,
      path: `${url.pathname}${url.search}`,
      headers,
      body,
      operation,
    };
    this.requests.push(recorded);
    if (operation === "unknown") {
      sendError(response, 404, "NOT_FOUND", `No route for ${method} ${url.pathname}.`);
      return;
    }
    const authorization = headers.authorization ?? "";
    const expected = this.options.requireAccessToken;
    if (
      !authorization.startsWith("Bearer ") ||
      (expected !== undefined && authorization !== `Bearer ${expected}`)
    ) {
      sendError(
        response,
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
      );
      return;
    }
    const wire = isRecord(body) ? body : {};
    const step: FakeStep = nextStep(this.queue, operation === "countTokens", this.responder, recorded) ??
      this.options.defaultReply ?? { kind: "reply", text: "Hello from the Vertex fake." };
    if (step.kind === "hang") return hangUntilClosed(response, recorded);
    if (step.kind === "reply" && step.holdUntil) await step.holdUntil;
    if (step.delayMs && step.kind === "error") await delay(step.delayMs);
    if (operation === "countTokens") return this.countTokens(wire, step, response);
    const model = decodeURIComponent(match?.[5] ?? "gemini");
    return this.modelCall(operation === "streamGenerateContent", model, wire, step, response);
  }

  private countTokens(wire: WireObject, step: FakeReply | FakeError, response: ServerResponse): void {
    const counted = countWireTokens(wire);
    if (step.kind === "error") {
      sendStepError(response, step, counted);
      return;
    }
    sendJson(response, 200, {
      totalTokens: counted,
      totalBillableCharacters: JSON.stringify(wire.contents ?? []).length,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: counted }],
    });
  }

  private async modelCall(
    streaming: boolean,
    model: string,
    wire: WireObject,
    step: FakeReply | FakeError,
    response: ServerResponse,
  ): Promise<void> {
    const counted = countWireTokens(wire);
    if (step.kind === "error" && isBadSuccess(step)) {
      return badSuccess(
        streaming,
        model,
        step,
        counted,
        `vertex_fake_response_${++this.responseCounter}`,
        response,
      );
    }
    if (step.kind === "error" && !(streaming && step.midStreamAfterEvents !== undefined)) {
      if (step.error === "malformed") return sendMalformed(response, streaming);
      sendStepError(response, step, counted);
      return;
    }
    if (this.contextLimit !== undefined && counted > this.contextLimit) {
      sendError(response, 400, "INVALID_ARGUMENT", overflowMessage(counted, this.contextLimit));
      return;
    }
    const responseId = `vertex_fake_response_${++this.responseCounter}`;
    if (step.kind === "error") {
      const partial: FakeReply = { kind: "reply", text: "Partial answer that will be cut off." };
      writeStreamHead(response);
      for (const chunk of buildChunks(model, partial, counted, responseId).slice(
        0,
        step.midStreamAfterEvents,
      )) {
        writeData(response, chunk);
      }
      writeData(response, { error: errorBody(step, counted).error });
      response.end();
      return;
    }
    if (streaming) {
      writeStreamHead(response);
      const chunks = buildChunks(model, step, counted, responseId);
      const hangAfter = step.hangAfterEvents;
      for (const chunk of hangAfter === undefined ? chunks : chunks.slice(0, hangAfter)) {
        if (response.destroyed) return;
        writeData(response, chunk);
        if (step.delayMs) await delay(step.delayMs);
      }
      if (hangAfter !== undefined) return hangUntilClosed(response);
      response.end();
      return;
    }
    if (step.delayMs) await delay(step.delayMs);
    sendJson(response, 200, buildResponse(model, step, counted, responseId));
  }
}

/** The fake's script and routing for the 200s a client cannot take as an answer. */
function badSuccess(
  streaming: boolean,
  model: string,
  step: FakeError,
  counted: number,
  responseId: string,
  response: ServerResponse,
): void {
  const reply: FakeReply = { kind: "reply", text: "An answer in a shape the client did not ask for." };
  if (step.error === "html_page") {
    sendGatewayPage(response);
    return;
  }
  if (step.error === "wrong_format" && streaming) {
    sendJson(response, 200, buildResponse(model, reply, counted, responseId));
    return;
  }
  if (!streaming && step.error === "truncated_stream") {
    const body = JSON.stringify(buildResponse(model, reply, counted, responseId));
    response.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    response.end(body.slice(0, Math.floor(body.length / 2)));
    return;
  }
  const chunks = buildChunks(model, reply, counted, responseId);
  writeStreamHead(response);
  const sent = step.error === "truncated_stream" ? chunks.slice(0, cutAt(step, chunks.length, 1)) : chunks;
  for (const chunk of sent) writeData(response, chunk);
  response.end();
}

/** A 200 whose body is not valid for the protocol: a cut SSE line, or a cut JSON body. */
function sendMalformed(response: ServerResponse, streaming: boolean): void {
  if (streaming) {
    writeStreamHead(response);
    response.end('data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "cut\n\n');
    return;
  }
  response.writeHead(200, { "content-type": "application/json" });
  response.end('{"candidates": [{"content": ');
}

/**
 * Starts an in-process Vertex AI Gemini API over HTTPS on 127.0.0.1: `generateContent`,
 * `streamGenerateContent?alt=sse` (one JSON response per `data:` line, no `event:` lines) and `countTokens`
 * under `/v1` and `/v1beta1`. Its errors have Google's JSON shape (`{error:{code,message,status,details}}`);
 * an overflow is the real 400 INVALID_ARGUMENT "input token count (N) exceeds the maximum number of tokens
 * allowed (M)" wording; a 429 carries both `retry-after` and a `google.rpc.RetryInfo` detail. Gemini has no
 * call ids on the wire, so the ids of `FakeToolCall`s are ignored. A count-tokens request consumes a queued
 * step only when that step is an error or a hang, so a pre-flight count never eats a scripted reply.
 */
export async function startVertexFake(options: VertexFakeOptions = {}): Promise<VertexFakeServer> {
  const handler = new VertexFakeHandler(options);
  const server = createServer(
    { key: VERTEX_FAKE_PRIVATE_KEY, cert: VERTEX_FAKE_CA_CERTIFICATE },
    fakeRequestListener(
      (received, response: ServerResponse) => handler.handle(received, response),
      (response, error) => sendError(response, 500, "INTERNAL", `Fake server failure: ${String(error)}`),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    providerId: "vertex",
    url: `https://127.0.0.1:${port}`,
    endpoint: `127.0.0.1:${port}`,
    caCertificate: VERTEX_FAKE_CA_CERTIFICATE,
    accessToken: options.requireAccessToken,
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
    reset() {
      handler.queue.length = 0;
      handler.requests.length = 0;
      handler.contextLimit = undefined;
      handler.responder = undefined;
    },
    countTokens: (body: unknown) => countWireTokens(isRecord(body) ? body : {}),
    close: () => closeHttpServer(server),
  };
}
