import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
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
  type FakeProviderServer,
  type FakeReply,
  type FakeServerOptions,
  type FakeStep,
  fakeTokenCount,
  type RecordedRequest,
  takeStep,
} from "./fake-script.ts";
import { isRecord } from "./is-record.ts";

/**
 * Test-only TLS identity of the Vertex fake: a self-signed P-256 certificate for 127.0.0.1 and localhost,
 * valid until 2126, which is also its own CA. It exists because `@google-cloud/vertexai` hard-codes
 * `https://`; the private key protects nothing and must never be trusted outside tests.
 */
export const VERTEX_FAKE_CA_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIB2jCCAX+gAwIBAgIUKhTJv1qsBhfuzTu1jmO/sxUYI7wwCgYIKoZIzj0EAwIw
KzEpMCcGA1UEAwwgVW5mb3JnZXQgVmVydGV4IGZha2UgKHRlc3Qgb25seSkwIBcN
MjYxMTI2MDIzOTExWhgPMjEyNjExMDIwMjM5MTFaMCsxKTAnBgNVBAMMIFVuZm9y
Z2V0IFZlcnRleCBmYWtlICh0ZXN0IG9ubHkpMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAExndD6uOxeG6muyXOFaLnhounqjywMR3hWj6qBqw9AnNzqXJwkySUoi2a
127UbdhYUt6dpZQwNEcnwu9UJo+jg6N/MH0wHQYDVR0OBBYEFIRpeMq61PikFVVF
cV5Zm359GybjMB8GA1UdIwQYMBaAFIRpeMq61PikFVVFcV5Zm359GybjMBoGA1Ud
EQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB
/wQEAwIChDAKBggqhkjOPQQDAgNJADBGAiEA+g2e1qPPT/DoafrlH0vwSHqqdmnS
072JPepII7GEazsCIQDF13K9091JY3BJLf+vEV3g8jyDRlKcWNUE5HdZqAZfMg==
-----END CERTIFICATE-----
`;

const VERTEX_FAKE_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqSstXywIxQeZjAea
r2FLzLuyEimE4+uiMpJzJLWrRoahRANCAATGd0Pq47F4bqa7Jc4VoueGi6eqPLAx
HeFaPqoGrD0Cc3OpcnCTJJSiLZrXbtRt2FhS3p2llDA0RyfC71Qmj6OD
-----END PRIVATE KEY-----
`;

/**
 * Writes a CA bundle that trusts the fake (its certificate, plus the bundle `NODE_EXTRA_CA_CERTS` already
 * names, so other extra CAs stay trusted) and returns its path. Set `NODE_EXTRA_CA_CERTS` to that path in the
 * environment of the process that runs the SDK before it starts (e.g. vitest's `test.env` with
 * `pool: "forks"`): Node reads it only at start-up. Idempotent: when `NODE_EXTRA_CA_CERTS` already names a
 * bundle written here, that path is returned unchanged. The file is written atomically.
 */
export function writeVertexFakeCaCertificate(
  directory: string = join(tmpdir(), "unforget-vertex-fake"),
): string {
  const base = resolve(directory);
  const existing = process.env.NODE_EXTRA_CA_CERTS;
  if (existing && resolve(existing).startsWith(`${base}${sep}`) && existsSync(existing)) return existing;
  let bundle = VERTEX_FAKE_CA_CERTIFICATE;
  if (existing && existsSync(existing)) bundle += `\n${readFileSync(existing, "utf8")}`;
  const digest = createHash("sha256").update(bundle).digest("hex").slice(0, 16);
  const path = join(base, `vertex-fake-ca-${digest}.pem`);
  if (!existsSync(path)) {
    mkdirSync(base, { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, bundle);
    renameSync(temporary, path);
  }
  return path;
}

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

type WireObject = Record<string, unknown>;

const ROUTE =
  /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: "STOP",
  tool_use: "STOP",
  stop_sequence: "STOP",
  max_tokens: "MAX_TOKENS",
  refusal: "SAFETY",
  pause_turn: "OTHER",
  model_context_window_exceeded: "OTHER",
  other: "OTHER",
};

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
  const requests: RecordedRequest[] = [];
  const queue: FakeStep[] = [];
  let contextLimit = options.contextLimit;
  let responseCounter = 0;

  const server: Server = createServer(
    { key: VERTEX_FAKE_PRIVATE_KEY, cert: VERTEX_FAKE_CA_CERTIFICATE },
    fakeRequestListener(handle, (response, error) =>
      sendError(response, 500, "INTERNAL", `Fake server failure: ${String(error)}`),
    ),
  );

  async function handle(received: FakeHttpRequest, response: ServerResponse): Promise<void> {
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
    requests.push(recorded);

    if (operation === "unknown") {
      sendError(response, 404, "NOT_FOUND", `No route for ${method} ${url.pathname}.`);
      return;
    }
    const authorization = headers.authorization ?? "";
    const expected = options.requireAccessToken;
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
    const counted = countWireTokens(wire);
    const model = decodeURIComponent(match?.[5] ?? "gemini");

    const step: FakeStep = takeStep(queue, operation === "countTokens") ??
      options.defaultReply ?? {
        kind: "reply",
        text: "Hello from the Vertex fake.",
      };
    if (step.kind === "hang") {
      await hangUntilClosed(response, recorded);
      return;
    }
    if (step.delayMs && step.kind === "error") await delay(step.delayMs);

    if (operation === "countTokens") {
      if (step.kind === "error") {
        sendStepError(response, step, counted);
        return;
      }
      sendJson(response, 200, {
        totalTokens: counted,
        totalBillableCharacters: JSON.stringify(wire.contents ?? []).length,
        promptTokensDetails: [{ modality: "TEXT", tokenCount: counted }],
      });
      return;
    }

    const streaming = operation === "streamGenerateContent";
    if (step.kind === "error" && !(streaming && step.midStreamAfterEvents !== undefined)) {
      if (step.error === "malformed") {
        if (streaming) {
          writeStreamHead(response);
          response.end('data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "cut\n\n');
        } else {
          response.writeHead(200, { "content-type": "application/json" });
          response.end('{"candidates": [{"content": ');
        }
        return;
      }
      sendStepError(response, step, counted);
      return;
    }
    if (contextLimit !== undefined && counted > contextLimit) {
      sendError(response, 400, "INVALID_ARGUMENT", overflowMessage(counted, contextLimit));
      return;
    }
    responseCounter++;
    const responseId = `vertex_fake_response_${responseCounter}`;
    if (step.kind === "error") {
      const chunks = buildChunks(
        model,
        { kind: "reply", text: "Partial answer that will be cut off." },
        counted,
        responseId,
      );
      writeStreamHead(response);
      for (const chunk of chunks.slice(0, step.midStreamAfterEvents)) writeData(response, chunk);
      writeData(response, { error: errorBody(step, counted).error });
      response.end();
      return;
    }
    if (streaming) {
      writeStreamHead(response);
      for (const chunk of buildChunks(model, step, counted, responseId)) {
        if (response.destroyed) return;
        writeData(response, chunk);
        if (step.delayMs) await delay(step.delayMs);
      }
      response.end();
      return;
    }
    if (step.delayMs) await delay(step.delayMs);
    sendJson(response, 200, buildResponse(model, step, counted, responseId));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    providerId: "vertex",
    url: `https://127.0.0.1:${port}`,
    endpoint: `127.0.0.1:${port}`,
    caCertificate: VERTEX_FAKE_CA_CERTIFICATE,
    accessToken: options.requireAccessToken,
    requests,
    enqueue(...steps) {
      queue.push(...steps);
    },
    setContextLimit(limit) {
      contextLimit = limit;
    },
    countTokens: (body: unknown) => countWireTokens(isRecord(body) ? body : {}),
    close: () => closeHttpServer(server),
  };
}

/** The fake's count: the content-carrying fields only, so generateContent and countTokens agree. */
function countWireTokens(wire: WireObject): number {
  return fakeTokenCount({
    contents: wire.contents ?? [],
    systemInstruction: wire.systemInstruction ?? null,
    tools: wire.tools ?? [],
  });
}

function overflowMessage(actual: number, limit: number): string {
  return `The input token count (${actual}) exceeds the maximum number of tokens allowed (${limit}).`;
}

function errorBody(
  step: FakeError,
  counted: number,
): { status: number; error: WireObject; headers: Record<string, string> } {
  const google = (code: number, status: string, message: string, details?: unknown[]) => ({
    code,
    message,
    status,
    ...(details ? { details } : {}),
  });
  switch (step.error) {
    case "rate_limit": {
      const seconds = step.retryAfterSeconds ?? 1;
      return {
        status: 429,
        headers: { "retry-after": String(seconds) },
        error: google(429, "RESOURCE_EXHAUSTED", "Resource exhausted. Please try again later.", [
          { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${seconds}s` },
        ]),
      };
    }
    case "overloaded":
      return {
        status: 503,
        headers: {},
        error: google(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
      };
    case "server_error":
    case "malformed":
    case "context_window_exceeded_stop":
      return { status: 500, headers: {}, error: google(500, "INTERNAL", "Internal error encountered.") };
    case "prompt_too_long":
    case "prompt_too_long_generic": {
      const message = overflowMessage(
        step.actualTokens ?? counted,
        step.limitTokens ?? Math.max(1, counted - 1),
      );
      return {
        status: 400,
        headers: {},
        error: {
          ...google(400, "INVALID_ARGUMENT", message),
          errors: [{ message, domain: "global", reason: "badRequest" }],
        },
      };
    }
    case "request_too_large":
      return {
        status: 400,
        headers: {},
        error: google(400, "INVALID_ARGUMENT", "Request payload size exceeds the limit: 20971520 bytes."),
      };
    case "invalid_request":
      return {
        status: 400,
        headers: {},
        error: google(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
      };
    case "authentication":
      return {
        status: 403,
        headers: {},
        error: google(
          403,
          "PERMISSION_DENIED",
          "Permission 'aiplatform.endpoints.predict' denied on resource.",
        ),
      };
  }
}

function sendStepError(response: ServerResponse, step: FakeError, counted: number): void {
  const { status, error, headers } = errorBody(step, counted);
  sendJson(response, status, { error }, headers);
}

interface WirePart extends WireObject {}

/** The reply's parts in Gemini's order: thought summary, text, function calls, raw parts. */
function replyParts(reply: FakeReply): WirePart[] {
  const parts: WirePart[] = [];
  if (reply.thinking) parts.push({ text: reply.thinking, thought: true });
  if (reply.text) parts.push({ text: reply.text });
  for (const call of reply.toolCalls ?? [])
    parts.push({ functionCall: { name: call.name, args: call.input } });
  for (const raw of reply.rawBlocks ?? []) if (isRecord(raw)) parts.push(raw);
  // Gemini attaches the thought signature to the first function call, else to the last text part.
  if (reply.thinking) {
    const signed =
      parts.find((part) => "functionCall" in part) ??
      parts.findLast((part) => "text" in part && !part.thought);
    if (signed)
      signed.thoughtSignature = Buffer.from(`signature:${reply.thinking.length}`).toString("base64");
  }
  return parts;
}

function usageMetadata(reply: FakeReply, counted: number, parts: WirePart[]): WireObject {
  const cached = reply.usage?.cacheReadInputTokens ?? 0;
  const prompt =
    reply.usage?.inputTokens === undefined
      ? counted
      : reply.usage.inputTokens + cached + (reply.usage.cacheCreationInputTokens ?? 0);
  const thoughtParts = parts.filter((part) => part.thought === true);
  const visibleParts = parts.filter((part) => part.thought !== true);
  const thoughtsDefault = thoughtParts.length > 0 ? fakeTokenCount(thoughtParts) : 0;
  const output = reply.usage?.outputTokens ?? Math.max(1, fakeTokenCount(visibleParts)) + thoughtsDefault;
  const thoughts = Math.min(thoughtsDefault, output);
  const metadata: WireObject = {
    promptTokenCount: prompt,
    candidatesTokenCount: output - thoughts,
    totalTokenCount: prompt + output,
    trafficType: "ON_DEMAND",
    promptTokensDetails: [{ modality: "TEXT", tokenCount: prompt }],
  };
  if (cached > 0) metadata.cachedContentTokenCount = cached;
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  return metadata;
}

function finishReason(reply: FakeReply): string {
  return FINISH_REASONS[reply.stopReason ?? (reply.toolCalls?.length ? "tool_use" : "end_turn")];
}

function buildResponse(model: string, reply: FakeReply, counted: number, responseId: string): WireObject {
  const parts = replyParts(reply);
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: finishReason(reply), index: 0 }],
    usageMetadata: usageMetadata(reply, counted, parts),
    modelVersion: model,
    createTime: "2026-01-01T00:00:00.000000Z",
    responseId,
  };
}

/**
 * Stream chunks as Vertex sends them: text split over several chunks, each function call whole in its own
 * chunk, the finish reason and final usage on the last chunk, and a running usage on earlier ones.
 */
function buildChunks(model: string, reply: FakeReply, counted: number, responseId: string): WireObject[] {
  const parts = replyParts(reply);
  const pieces: WirePart[] = [];
  for (const part of parts) {
    if (typeof part.text === "string" && part.text.length >= 3) {
      const third = Math.ceil(part.text.length / 3);
      const texts = [
        part.text.slice(0, third),
        part.text.slice(third, 2 * third),
        part.text.slice(2 * third),
      ].filter((text) => text !== "");
      texts.forEach((text, index) => {
        const piece: WirePart = { ...part, text };
        if (index < texts.length - 1) delete piece.thoughtSignature;
        pieces.push(piece);
      });
    } else {
      pieces.push(part);
    }
  }
  const usage = usageMetadata(reply, counted, parts);
  const common = { modelVersion: model, createTime: "2026-01-01T00:00:00.000000Z", responseId };
  if (pieces.length === 0) pieces.push({ text: "" });
  const chunks: WireObject[] = pieces.map((piece) => ({
    candidates: [{ content: { role: "model", parts: [piece] }, index: 0 }] as WireObject[],
    usageMetadata: { promptTokenCount: usage.promptTokenCount, trafficType: "ON_DEMAND" },
    ...common,
  }));
  const last = chunks.at(-1);
  const candidate = (last?.candidates as WireObject[] | undefined)?.[0];
  if (last && candidate) {
    candidate.finishReason = finishReason(reply);
    last.usageMetadata = usage;
  }
  return chunks;
}

function writeStreamHead(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

function writeData(response: ServerResponse, payload: unknown): void {
  response.write(`data: ${JSON.stringify(payload)}\r\n\r\n`);
}

/** Google front-ends name the charset in `content-type`. */
function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  sendFakeJson(response, status, payload, { "content-type": "application/json; charset=UTF-8", ...headers });
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  sendJson(response, status, { error: { code: status, message, status: code } });
}
