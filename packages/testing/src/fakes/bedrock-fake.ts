import { createHash, randomUUID } from "node:crypto";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import type { StopReason } from "@unforget/core";
import { delay, type FakeHttpRequest, fakeRequestListener, hangUntilClosed, sendJson } from "./fake-http.ts";
import type {
  FakeError,
  FakeErrorKind,
  FakeProviderServer,
  FakeReply,
  FakeServerOptions,
  FakeStep,
  RecordedRequest,
} from "./fake-script.ts";
import { fakeTokenCount, takeStep } from "./fake-script.ts";

/** SigV4 credentials the fake accepts; any non-empty Authorization header is accepted as well. */
export interface BedrockFakeCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** A Bedrock exception by its wire name, for cases the shared `FakeErrorKind`s do not cover. */
export interface BedrockFakeException {
  kind: "bedrock-exception";
  /** Wire name, e.g. "ModelNotReadyException", "ModelTimeoutException", "AccessDeniedException". */
  name: string;
  /** HTTP status of the error response (ignored for mid-stream frames). */
  status: number;
  message: string;
  /** For stream requests: emit this many normal events first, then the exception as an event-stream frame. */
  midStreamAfterEvents?: number;
  /** Sent as the `retry-after` header, in seconds. */
  retryAfterSeconds?: number;
}

export interface BedrockFakeOptions extends FakeServerOptions {
  /** Region the provider should be configured with; the fake does not check it. Defaults to "us-east-1". */
  region?: string;
  /**
   * Decides whether `count-tokens` accepts a model id. Defaults to the real service's behaviour: bare
   * foundation-model ids are accepted, cross-region profile ids (`us.`, `eu.`, `apac.`, `global.`) and Amazon
   * models are rejected with "The provided model doesn't support counting tokens".
   */
  countTokensSupported?: (modelId: string) => boolean;
}

/** The Bedrock fake: the shared scripting model plus what a Bedrock client needs to reach it. */
export interface BedrockFakeServer extends FakeProviderServer {
  /** Region to configure the client with. */
  readonly region: string;
  /** Static SigV4 credentials to configure the client with. */
  readonly credentials: BedrockFakeCredentials;
  /** Appends Bedrock-specific exceptions (or ordinary steps) to the script. */
  enqueueBedrock(...steps: (FakeStep | BedrockFakeException)[]): void;
  /** Switches count-tokens support for every model on or off (overrides `countTokensSupported`). */
  setCountTokensSupported(supported: boolean | undefined): void;
}

type Step = FakeStep | BedrockFakeException;

const ERROR_TYPE_NAMESPACE = "http://internal.amazon.com/coral/com.amazon.bedrock/";
const CROSS_REGION_PREFIX = /^(?:us|eu|apac|ap|jp|au|ca|us-gov|global)\./;
const DEFAULT_CONTEXT_LIMIT = 200_000;

interface ExceptionSpec {
  name: string;
  status: number;
  message: string;
  retryAfterSeconds?: number;
}

/**
 * Starts an in-process Bedrock Runtime fake on 127.0.0.1 over h2c (cleartext HTTP/2), so the SDK's default
 * `NodeHttp2Handler` is exercised. It speaks restJson1 for `converse` and `count-tokens` and binary
 * `application/vnd.amazon.eventstream` framing for `converse-stream`, and answers errors with the
 * `x-amzn-errortype` header and `__type` body field the SDK maps to its exception classes.
 */
export async function startBedrockFake(options: BedrockFakeOptions = {}): Promise<BedrockFakeServer> {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const queue: Step[] = [];
  const requests: RecordedRequest[] = [];
  const sessions = new Set<http2.ServerHttp2Session>();
  let contextLimit = options.contextLimit;
  let countTokensOverride: boolean | undefined;
  let toolCounter = 0;
  const region = options.region ?? "us-east-1";
  const defaultReply: FakeReply = options.defaultReply ?? { kind: "reply", text: "OK." };

  const countTokens = (body: unknown): number => {
    const record = asRecord(body);
    const converse = asRecord(asRecord(record.input).converse);
    const source = Object.keys(converse).length > 0 ? converse : record;
    return fakeTokenCount([source.system ?? null, source.messages ?? [], source.toolConfig ?? null]);
  };

  const countTokensSupported = (modelId: string): boolean => {
    if (countTokensOverride !== undefined) return countTokensOverride;
    if (options.countTokensSupported) return options.countTokensSupported(modelId);
    return !CROSS_REGION_PREFIX.test(modelId) && !modelId.startsWith("amazon.");
  };

  const sendException = (response: http2.Http2ServerResponse, spec: ExceptionSpec): void => {
    const headers: Record<string, string> = {
      "x-amzn-errortype": `${spec.name}:${ERROR_TYPE_NAMESPACE}`,
      "x-amzn-requestid": randomUUID(),
    };
    if (spec.retryAfterSeconds !== undefined) headers["retry-after"] = String(spec.retryAfterSeconds);
    sendJson(response, spec.status, { __type: spec.name, message: spec.message }, headers);
  };

  const exceptionFor = (step: FakeError, counted: number): ExceptionSpec => {
    const actual = step.actualTokens ?? counted;
    const limit = step.limitTokens ?? contextLimit ?? DEFAULT_CONTEXT_LIMIT;
    return fakeErrorException(step.error, actual, limit, step.retryAfterSeconds);
  };

  const encodeEvent = (type: string, payload: unknown): Uint8Array =>
    codec.encode({
      headers: {
        ":event-type": { type: "string", value: type },
        ":content-type": { type: "string", value: "application/json" },
        ":message-type": { type: "string", value: "event" },
      },
      body: fromUtf8(JSON.stringify(payload)),
    });

  const encodeException = (spec: ExceptionSpec): Uint8Array =>
    codec.encode({
      headers: {
        ":exception-type": { type: "string", value: lowerFirst(spec.name) },
        ":content-type": { type: "string", value: "application/json" },
        ":message-type": { type: "string", value: "exception" },
      },
      body: fromUtf8(JSON.stringify({ message: spec.message })),
    });

  const buildContent = (reply: FakeReply): unknown[] => {
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
      toolCounter += 1;
      content.push({
        toolUse: { toolUseId: call.id ?? `tooluse_fake_${toolCounter}`, name: call.name, input: call.input },
      });
    }
    for (const raw of reply.rawBlocks ?? []) content.push(raw);
    return content;
  };

  const buildUsage = (reply: FakeReply, inputTokens: number, content: unknown[]) => {
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
  };

  const replyStopReason = (reply: FakeReply): string =>
    wireStopReason(reply.stopReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_use" : "end_turn"));

  /** The ConverseStream events of a reply, in the order the real service sends them. */
  const streamEvents = (reply: FakeReply, inputTokens: number): [string, unknown][] => {
    const content = buildContent(reply);
    const events: [string, unknown][] = [["messageStart", { role: "assistant" }]];
    content.forEach((block, contentBlockIndex) => {
      const record = asRecord(block);
      if (typeof record.text === "string") {
        for (const piece of splitInTwo(record.text)) {
          events.push(["contentBlockDelta", { contentBlockIndex, delta: { text: piece } }]);
        }
      } else if (record.toolUse !== undefined) {
        const toolUse = asRecord(record.toolUse);
        events.push([
          "contentBlockStart",
          { contentBlockIndex, start: { toolUse: { toolUseId: toolUse.toolUseId, name: toolUse.name } } },
        ]);
        for (const piece of splitInTwo(JSON.stringify(toolUse.input ?? {}))) {
          events.push(["contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input: piece } } }]);
        }
      } else if (asRecord(record.reasoningContent).redactedContent !== undefined) {
        const redacted = asRecord(record.reasoningContent).redactedContent;
        events.push([
          "contentBlockDelta",
          { contentBlockIndex, delta: { reasoningContent: { redactedContent: redacted } } },
        ]);
      } else if (record.reasoningContent !== undefined) {
        const reasoning = asRecord(asRecord(record.reasoningContent).reasoningText);
        for (const piece of splitInTwo(String(reasoning.text ?? ""))) {
          events.push([
            "contentBlockDelta",
            { contentBlockIndex, delta: { reasoningContent: { text: piece } } },
          ]);
        }
        events.push([
          "contentBlockDelta",
          { contentBlockIndex, delta: { reasoningContent: { signature: reasoning.signature } } },
        ]);
      } else {
        // A block ConverseStream has no delta for: announce it as a start member, which the SDK surfaces as
        // an unknown union member.
        events.push(["contentBlockStart", { contentBlockIndex, start: block }]);
      }
      events.push(["contentBlockStop", { contentBlockIndex }]);
    });
    events.push(["messageStop", { stopReason: replyStopReason(reply) }]);
    events.push([
      "metadata",
      { usage: buildUsage(reply, inputTokens, content), metrics: { latencyMs: reply.delayMs ?? 0 } },
    ]);
    return events;
  };

  const handle = async (received: FakeHttpRequest, response: http2.Http2ServerResponse): Promise<void> => {
    const { method, headers, body } = received;
    const path = safeDecode(received.url.split("?")[0] ?? "/");
    const match = /^\/model\/(.+)\/(converse|converse-stream|count-tokens)$/.exec(path);
    const operation =
      match?.[2] === "converse"
        ? "messages"
        : match?.[2] === "converse-stream"
          ? "stream"
          : match?.[2] === "count-tokens"
            ? "count_tokens"
            : "unknown";
    const recorded: RecordedRequest = { method, path, headers, body, operation };
    requests.push(recorded);

    if (method !== "POST" || match === null) {
      sendException(response, {
        name: "UnknownOperationException",
        status: 404,
        message: `The fake Bedrock server has no operation at ${method} ${path}.`,
      });
      return;
    }
    const modelId = match[1] ?? "";
    const authorization = headers.authorization ?? "";
    if (!/^(?:AWS4-HMAC-SHA256 Credential=\S+|Bearer \S+)/.test(authorization)) {
      sendException(response, {
        name: "UnrecognizedClientException",
        status: 403,
        message: "The security token included in the request is invalid.",
      });
      return;
    }

    const counted = countTokens(body);
    if (operation === "count_tokens") {
      // Counting consumes a scripted failure (error or hang) but never a reply meant for a model call.
      const scripted = takeStep(queue, true);
      if (scripted !== undefined && scripted.kind !== "reply") {
        if (scripted.kind === "hang") {
          await hangUntilClosed(response, recorded);
          return;
        }
        if (scripted.kind === "error" && scripted.delayMs !== undefined) await delay(scripted.delayMs);
        sendException(
          response,
          scripted.kind === "error"
            ? exceptionFor(scripted, counted)
            : { name: scripted.name, status: scripted.status, message: scripted.message },
        );
        return;
      }
      if (!countTokensSupported(modelId)) {
        sendException(response, {
          name: "ValidationException",
          status: 400,
          message: "The provided model doesn't support counting tokens.",
        });
        return;
      }
      sendJson(response, 200, { inputTokens: counted }, { "x-amzn-requestid": randomUUID() });
      return;
    }

    // An over-limit prompt is rejected before the script is consulted, so the queued reply answers the
    // retry that follows compaction.
    const next = queue[0];
    if (
      contextLimit !== undefined &&
      counted > contextLimit &&
      (next === undefined || next.kind === "reply")
    ) {
      sendException(response, fakeErrorException("prompt_too_long", counted, contextLimit, undefined));
      return;
    }
    const step: Step = takeStep(queue, false) ?? defaultReply;
    if (step.kind === "hang") {
      await hangUntilClosed(response, recorded);
      return;
    }
    if (step.kind === "error" && step.delayMs !== undefined) await delay(step.delayMs);

    const isStream = operation === "stream";
    if (step.kind === "error" || step.kind === "bedrock-exception") {
      const spec: ExceptionSpec =
        step.kind === "error"
          ? exceptionFor(step, counted)
          : {
              name: step.name,
              status: step.status,
              message: step.message,
              ...(step.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: step.retryAfterSeconds }),
            };
      const after = step.midStreamAfterEvents;
      if (isStream && after !== undefined) {
        response.writeHead(200, {
          "content-type": "application/vnd.amazon.eventstream",
          "x-amzn-requestid": randomUUID(),
        });
        for (const [type, payload] of streamEvents(defaultReply, counted).slice(0, after)) {
          response.write(encodeEvent(type, payload));
        }
        response.end(encodeException(spec));
        return;
      }
      if (step.kind === "error" && step.error === "malformed") {
        sendMalformed(response, isStream);
        return;
      }
      if (step.kind === "error" && step.error === "context_window_exceeded_stop") {
        const reply: FakeReply = {
          kind: "reply",
          text: "Partial answer",
          stopReason: "model_context_window_exceeded",
        };
        if (isStream) await sendStream(response, reply, counted);
        else sendConverse(response, reply, counted);
        return;
      }
      sendException(response, spec);
      return;
    }

    if (isStream) await sendStream(response, step, counted);
    else {
      if (step.delayMs !== undefined) await delay(step.delayMs);
      sendConverse(response, step, counted);
    }
  };

  const sendConverse = (response: http2.Http2ServerResponse, reply: FakeReply, counted: number): void => {
    const content = buildContent(reply);
    sendJson(
      response,
      200,
      {
        output: { message: { role: "assistant", content } },
        stopReason: replyStopReason(reply),
        usage: buildUsage(reply, counted, content),
        metrics: { latencyMs: reply.delayMs ?? 0 },
      },
      { "x-amzn-requestid": randomUUID() },
    );
  };

  const sendStream = async (
    response: http2.Http2ServerResponse,
    reply: FakeReply,
    counted: number,
  ): Promise<void> => {
    response.writeHead(200, {
      "content-type": "application/vnd.amazon.eventstream",
      "x-amzn-requestid": randomUUID(),
    });
    for (const [type, payload] of streamEvents(reply, counted)) {
      if (response.destroyed || response.stream.closed) return;
      if (reply.delayMs !== undefined) await delay(reply.delayMs);
      response.write(encodeEvent(type, payload));
    }
    response.end();
  };

  const sendMalformed = (response: http2.Http2ServerResponse, isStream: boolean): void => {
    if (isStream) {
      response.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      // A prelude that announces more bytes than follow, with a wrong CRC: not a valid event-stream frame.
      response.end(Buffer.from([0, 0, 0, 64, 0, 0, 0, 8, 1, 2, 3, 4, 0x7b, 0x22, 0x78]));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"output": {"message": ');
  };

  const server = http2.createServer();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  server.on(
    "request",
    fakeRequestListener(handle, (response, error) =>
      sendException(response, { name: "InternalServerException", status: 500, message: String(error) }),
    ),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    providerId: "bedrock",
    url: `http://127.0.0.1:${port}`,
    region,
    credentials: { accessKeyId: "AKIDUNFORGETFAKE", secretAccessKey: "unforget-fake-secret" },
    requests,
    enqueue: (...steps) => queue.push(...steps),
    enqueueBedrock: (...steps) => queue.push(...steps),
    setContextLimit: (limit) => {
      contextLimit = limit;
    },
    setCountTokensSupported: (supported) => {
      countTokensOverride = supported;
    },
    countTokens,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The exception the real service sends for each shared error kind. */
function fakeErrorException(
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

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function lowerFirst(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
