import { createHash, randomUUID } from "node:crypto";
import type http2 from "node:http2";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import type { StopReason } from "@unforget/core";
import { delay, sendJson } from "./fake-http.ts";
import { type FakeErrorKind, type FakeReply, fakeTokenCount } from "./fake-script.ts";

/**
 * The Bedrock Runtime wire formats the fake speaks: restJson1 bodies, the binary
 * `application/vnd.amazon.eventstream` framing of ConverseStream, and exceptions named the way the SDK maps
 * them to its classes. Pure builders and writers; the script and the routing stay in the server.
 */

/** An exception as the service sends it. */
export interface ExceptionSpec {
  name: string;
  status: number;
  message: string;
  retryAfterSeconds?: number;
}

type Response = http2.Http2ServerResponse;

const ERROR_TYPE_NAMESPACE = "http://internal.amazon.com/coral/com.amazon.bedrock/";
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Answers with an exception: `x-amzn-errortype` header and `__type` field, as the SDK expects. */
export function sendException(response: Response, spec: ExceptionSpec): void {
  const headers: Record<string, string> = {
    "x-amzn-errortype": `${spec.name}:${ERROR_TYPE_NAMESPACE}`,
    "x-amzn-requestid": randomUUID(),
  };
  if (spec.retryAfterSeconds !== undefined) headers["retry-after"] = String(spec.retryAfterSeconds);
  sendJson(response, spec.status, { __type: spec.name, message: spec.message }, headers);
}

/** One ConverseStream event frame. */
export function encodeEvent(type: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** One ConverseStream exception frame (the SDK throws it from the stream's iterator). */
export function encodeException(spec: ExceptionSpec): Uint8Array {
  return codec.encode({
    headers: {
      ":exception-type": { type: "string", value: lowerFirst(spec.name) },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "exception" },
    },
    body: fromUtf8(JSON.stringify({ message: spec.message })),
  });
}

/** Builds reply content, giving tool calls without an id the next id from `nextToolId`. */
export class BedrockReplyBuilder {
  private readonly nextToolId: () => string;

  constructor(nextToolId: () => string) {
    this.nextToolId = nextToolId;
  }

  /** Converse content blocks of a reply, in the order the service returns them. */
  content(reply: FakeReply): unknown[] {
    const content: unknown[] = [];
    if (reply.thinking !== undefined) {
      content.push({
        reasoningContent: {
          reasoningText: { text: reply.thinking, signature: fakeSignature(reply.thinking) },
        },
      });
    }
    if (reply.text !== undefined) content.push({ text: reply.text });
    for (const call of reply.toolCalls ?? []) {
      content.push({
        toolUse: { toolUseId: call.id ?? this.nextToolId(), name: call.name, input: call.input },
      });
    }
    for (const raw of reply.rawBlocks ?? []) content.push(raw);
    return content;
  }

  /** The `converse` response body. */
  converseBody(reply: FakeReply, inputTokens: number): Record<string, unknown> {
    const content = this.content(reply);
    return {
      output: { message: { role: "assistant", content } },
      stopReason: replyStopReason(reply),
      usage: converseUsage(reply, inputTokens, content),
      metrics: { latencyMs: reply.delayMs ?? 0 },
    };
  }

  /** The ConverseStream events of a reply, in the order the real service sends them. */
  streamEvents(reply: FakeReply, inputTokens: number): [string, unknown][] {
    const content = this.content(reply);
    const events: [string, unknown][] = [["messageStart", { role: "assistant" }]];
    content.forEach((block, contentBlockIndex) => {
      events.push(...blockEvents(asRecord(block), block, contentBlockIndex));
      events.push(["contentBlockStop", { contentBlockIndex }]);
    });
    events.push(["messageStop", { stopReason: replyStopReason(reply) }]);
    events.push([
      "metadata",
      { usage: converseUsage(reply, inputTokens, content), metrics: { latencyMs: reply.delayMs ?? 0 } },
    ]);
    return events;
  }
}

/** Writes a ConverseStream: the head, then each event, `delayMs` apart; stops if the client went away. */
export async function writeEventStream(
  response: Response,
  events: [string, unknown][],
  delayMs: number | undefined,
): Promise<void> {
  response.writeHead(200, {
    "content-type": "application/vnd.amazon.eventstream",
    "x-amzn-requestid": randomUUID(),
  });
  for (const [type, payload] of events) {
    if (response.destroyed || response.stream.closed) return;
    if (delayMs !== undefined) await delay(delayMs);
    response.write(encodeEvent(type, payload));
  }
}

/** A 200 whose body is not valid for the protocol: a cut JSON body, or a frame with a wrong CRC. */
export function sendMalformed(response: Response, isStream: boolean): void {
  if (isStream) {
    response.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    // A prelude that announces more bytes than follow, with a wrong CRC: not a valid event-stream frame.
    response.end(Buffer.from([0, 0, 0, 64, 0, 0, 0, 8, 1, 2, 3, 4, 0x7b, 0x22, 0x78]));
    return;
  }
  response.writeHead(200, { "content-type": "application/json" });
  response.end('{"output": {"message": ');
}

/** The exception the real service sends for each shared error kind. */
export function fakeErrorException(
  kind: FakeErrorKind,
  actual: number,
  limit: number,
  retryAfterSeconds: number | undefined,
): ExceptionSpec {
  const withRetry = (spec: ExceptionSpec): ExceptionSpec =>
    retryAfterSeconds === undefined ? spec : { ...spec, retryAfterSeconds };
  switch (kind) {
    case "rate_limit":
      return {
        name: "ThrottlingException",
        status: 429,
        message: "Too many requests, please wait before trying again.",
        retryAfterSeconds: retryAfterSeconds ?? 0,
      };
    case "overloaded":
      return withRetry({
        name: "ServiceUnavailableException",
        status: 503,
        message: "Bedrock is unable to process your request.",
      });
    case "server_error":
    case "malformed":
    case "context_window_exceeded_stop":
    case "html_page":
    case "wrong_format":
    case "truncated_stream":
      return withRetry({
        name: "InternalServerException",
        status: 500,
        message: "The server encountered an internal error while processing the request.",
      });
    case "prompt_too_long":
      return {
        name: "ValidationException",
        status: 400,
        message: `The model returned the following errors: prompt is too long: ${actual} tokens > ${limit} maximum`,
      };
    case "prompt_too_long_generic":
      return { name: "ValidationException", status: 400, message: "Input is too long for requested model." };
    case "request_too_large":
      return { name: "ValidationException", status: 413, message: "Request body is too large." };
    case "authentication":
      return {
        name: "AccessDeniedException",
        status: 403,
        message: "You don't have access to the model with the specified model ID.",
      };
    default:
      return {
        name: "ValidationException",
        status: 400,
        message:
          "The model returned the following errors: messages: roles must alternate between user and assistant",
      };
  }
}

/** The events of one content block (its stop event excluded). */
function blockEvents(
  record: Record<string, unknown>,
  block: unknown,
  contentBlockIndex: number,
): [string, unknown][] {
  if (typeof record.text === "string") {
    return splitInTwo(record.text).map((piece) => [
      "contentBlockDelta",
      { contentBlockIndex, delta: { text: piece } },
    ]);
  }
  if (record.toolUse !== undefined) {
    const toolUse = asRecord(record.toolUse);
    return [
      [
        "contentBlockStart",
        { contentBlockIndex, start: { toolUse: { toolUseId: toolUse.toolUseId, name: toolUse.name } } },
      ],
      ...splitInTwo(JSON.stringify(toolUse.input ?? {})).map((piece): [string, unknown] => [
        "contentBlockDelta",
        { contentBlockIndex, delta: { toolUse: { input: piece } } },
      ]),
    ];
  }
  const reasoningContent = asRecord(record.reasoningContent);
  if (reasoningContent.redactedContent !== undefined) {
    return [
      [
        "contentBlockDelta",
        {
          contentBlockIndex,
          delta: { reasoningContent: { redactedContent: reasoningContent.redactedContent } },
        },
      ],
    ];
  }
  if (record.reasoningContent !== undefined) {
    const reasoning = asRecord(reasoningContent.reasoningText);
    return [
      ...splitInTwo(String(reasoning.text ?? "")).map((piece): [string, unknown] => [
        "contentBlockDelta",
        { contentBlockIndex, delta: { reasoningContent: { text: piece } } },
      ]),
      [
        "contentBlockDelta",
        { contentBlockIndex, delta: { reasoningContent: { signature: reasoning.signature } } },
      ],
    ];
  }
  // A block ConverseStream has no delta for: announced as a start member, which the SDK surfaces as an
  // unknown union member.
  return [["contentBlockStart", { contentBlockIndex, start: block }]];
}

function converseUsage(reply: FakeReply, inputTokens: number, content: unknown[]) {
  const usage = {
    inputTokens: reply.usage?.inputTokens ?? inputTokens,
    outputTokens: reply.usage?.outputTokens ?? fakeTokenCount(content),
    cacheReadInputTokens: reply.usage?.cacheReadInputTokens ?? 0,
    cacheWriteInputTokens: reply.usage?.cacheCreationInputTokens ?? 0,
  };
  return {
    ...usage,
    totalTokens:
      usage.inputTokens + usage.outputTokens + usage.cacheReadInputTokens + usage.cacheWriteInputTokens,
  };
}

function replyStopReason(reply: FakeReply): string {
  return wireStopReason(reply.stopReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_use" : "end_turn"));
}

function wireStopReason(reason: StopReason): string {
  switch (reason) {
    case "refusal":
      return "content_filtered";
    case "pause_turn":
    case "other":
      return "end_turn";
    default:
      return reason;
  }
}

/** A deterministic stand-in for the opaque reasoning signature, so the same reply always signs the same. */
function fakeSignature(thinking: string): string {
  return `sig_fake_${createHash("sha256").update(thinking).digest("base64url").slice(0, 16)}`;
}

function splitInTwo(text: string): string[] {
  if (text.length < 2) return [text];
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function lowerFirst(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}
