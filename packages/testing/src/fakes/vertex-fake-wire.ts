import type { ServerResponse } from "node:http";
import type { StopReason } from "@unforget/core";
import { sendJson as sendFakeJson } from "./fake-http.ts";
import { type FakeError, type FakeReply, fakeTokenCount } from "./fake-script.ts";

/**
 * The Vertex AI wire formats the fake speaks: Gemini responses and stream chunks (one JSON response per
 * `data:` line), and Google's error bodies. Pure builders and writers; the script and the routing stay in
 * the server.
 */

export type WireObject = Record<string, unknown>;

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

/** The fake's count: the content-carrying fields only, so generateContent and countTokens agree. */
export function countWireTokens(wire: WireObject): number {
  return fakeTokenCount({
    contents: wire.contents ?? [],
    systemInstruction: wire.systemInstruction ?? null,
    tools: wire.tools ?? [],
  });
}

export function overflowMessage(actual: number, limit: number): string {
  return `The input token count (${actual}) exceeds the maximum number of tokens allowed (${limit}).`;
}

export function errorBody(
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
    case "html_page":
    case "wrong_format":
    case "truncated_stream":
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

export function sendStepError(response: ServerResponse, step: FakeError, counted: number): void {
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

export function buildResponse(
  model: string,
  reply: FakeReply,
  counted: number,
  responseId: string,
): WireObject {
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
export function buildChunks(
  model: string,
  reply: FakeReply,
  counted: number,
  responseId: string,
): WireObject[] {
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

export function writeStreamHead(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

export function writeData(response: ServerResponse, payload: unknown): void {
  response.write(`data: ${JSON.stringify(payload)}\r\n\r\n`);
}

/** Google front-ends name the charset in `content-type`. */
export function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  sendFakeJson(response, status, payload, { "content-type": "application/json; charset=UTF-8", ...headers });
}

export function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  sendJson(response, status, { error: { code: status, message, status: code } });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
