import { randomUUID } from "node:crypto";
import type http2 from "node:http2";
import {
  asRecord,
  BedrockReplyBuilder,
  type ExceptionSpec,
  encodeException,
  fakeErrorException,
  sendException,
  sendMalformed,
  writeEventStream,
} from "./bedrock-fake-wire.ts";
import {
  delay,
  type FakeHttpRequest,
  fakeRequestListener,
  hangUntilClosed,
  listenHttp2,
  sendGatewayPage,
  sendJson,
} from "./fake-http.ts";
import type {
  FakeError,
  FakeProviderServer,
  FakeReply,
  FakeServerOptions,
  FakeStep,
  RecordedRequest,
} from "./fake-script.ts";
import {
  cutAt,
  type FakeResponder,
  fakeTokenCount,
  isBadSuccess,
  nextStep,
  takeStep,
} from "./fake-script.ts";

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
type Response = http2.Http2ServerResponse;

const CROSS_REGION_PREFIX = /^(?:us|eu|apac|ap|jp|au|ca|us-gov|global)\./;
const DEFAULT_CONTEXT_LIMIT = 200_000;
const OPERATIONS: Readonly<Record<string, string>> = {
  converse: "messages",
  "converse-stream": "stream",
  "count-tokens": "count_tokens",
};

/** The counted parts of a Converse or CountTokens body: system, messages and tool configuration. */
function countConverseTokens(body: unknown): number {
  const source = conversationOf(body);
  return fakeTokenCount([source.system ?? null, source.messages ?? [], source.toolConfig ?? null]);
}

/** The Converse conversation of a request: the body itself, or CountTokens' `input.converse`. */
function conversationOf(body: unknown): Record<string, unknown> {
  const record = asRecord(body);
  const converse = asRecord(asRecord(record.input).converse);
  return Object.keys(converse).length > 0 ? converse : record;
}

/**
 * Where the first reasoning block without a signature is (`messages.1.content.0.reasoningContent.reasoningText`):
 * Claude on Bedrock refuses earlier reasoning that does not carry the signature it was sent with.
 */
function unsignedReasoningPath(body: unknown): string | undefined {
  const messages = conversationOf(body).messages;
  if (!Array.isArray(messages)) return undefined;
  for (const [index, message] of messages.entries()) {
    const content = asRecord(message).content;
    if (!Array.isArray(content)) continue;
    for (const [position, block] of content.entries()) {
      const text = asRecord(asRecord(asRecord(block).reasoningContent).reasoningText);
      if (Object.keys(text).length > 0 && (typeof text.signature !== "string" || text.signature === "")) {
        return `messages.${index}.content.${position}.reasoningContent.reasoningText`;
      }
    }
  }
  return undefined;
}

/** The fake's script and routing: one instance per server, its state the script and the switches. */
class BedrockFakeHandler {
  readonly queue: Step[] = [];
  readonly requests: RecordedRequest[] = [];
  contextLimit: number | undefined;
  countTokensOverride: boolean | undefined;
  responder: FakeResponder | undefined;
  private readonly options: BedrockFakeOptions;
  private readonly defaultReply: FakeReply;
  private toolCounter = 0;
  private readonly replies = new BedrockReplyBuilder(() => `tooluse_fake_${++this.toolCounter}`);

  constructor(options: BedrockFakeOptions) {
    this.options = options;
    this.contextLimit = options.contextLimit;
    this.responder = options.respond;
    this.defaultReply = options.defaultReply ?? { kind: "reply", text: "OK." };
  }

  /** Routes one request: records it, checks the route and the signature, then counts or answers. */
  async handle(received: FakeHttpRequest, response: Response): Promise<void> {
    const { method, headers, body } = received;
    const path = safeDecode(received.url.split("?")[0] ?? "/");
    const match = /^\/model\/(.+)\/(converse|converse-stream|count-tokens)$/.exec(path);
    const operation = OPERATIONS[match?.[2] ?? ""] ?? "unknown";
    const recorded: RecordedRequest = { method, path, headers, body, operation };
    this.requests.push(recorded);
    if (method !== "POST" || match === null) {
      return sendException(response, {
        name: "UnknownOperationException",
        status: 404,
        message: `The fake Bedrock server has no operation at ${method} ${path}.`,
      });
    }
    if (!/^(?:AWS4-HMAC-SHA256 Credential=\S+|Bearer \S+)/.test(headers.authorization ?? "")) {
      return sendException(response, {
        name: "UnrecognizedClientException",
        status: 403,
        message: "The security token included in the request is invalid.",
      });
    }
    // Checked before the script, as Bedrock validates before it answers: a refused request takes no step.
    const unsigned = unsignedReasoningPath(body);
    if (unsigned !== undefined) {
      return sendException(response, {
        name: "ValidationException",
        status: 400,
        message: `The model returned the following errors: ${unsigned}.signature: Field required`,
      });
    }
    const counted = countConverseTokens(body);
    if (operation === "count_tokens") return this.countTokens(match[1] ?? "", counted, response, recorded);
    return this.modelCall(operation === "stream", counted, response, recorded);
  }

  /** CountTokens consumes a scripted failure (error or hang) but never a reply meant for a model call. */
  private async countTokens(modelId: string, counted: number, response: Response, recorded: RecordedRequest) {
    const scripted = takeStep(this.queue, true);
    if (scripted?.kind === "hang") return hangUntilClosed(response, recorded);
    if (scripted !== undefined && scripted.kind !== "reply") {
      if (scripted.kind === "error" && scripted.delayMs !== undefined) await delay(scripted.delayMs);
      return sendException(response, this.exceptionFor(scripted, counted));
    }
    if (!this.countTokensSupported(modelId)) {
      return sendException(response, {
        name: "ValidationException",
        status: 400,
        message: "The provided model doesn't support counting tokens.",
      });
    }
    sendJson(response, 200, { inputTokens: counted }, { "x-amzn-requestid": randomUUID() });
  }

  /** Converse and ConverseStream: the script's next step (or the default reply) decides the answer. */
  private async modelCall(isStream: boolean, counted: number, response: Response, recorded: RecordedRequest) {
    // An over-limit prompt is rejected before the script is consulted, so the queued reply answers the
    // retry that follows compaction.
    const next = this.queue[0];
    const limit = this.contextLimit;
    if (limit !== undefined && counted > limit && (next === undefined || next.kind === "reply")) {
      return sendException(response, fakeErrorException("prompt_too_long", counted, limit, undefined));
    }
    const step: Step = nextStep(this.queue, false, this.responder, recorded) ?? this.defaultReply;
    if (step.kind === "hang") return hangUntilClosed(response, recorded);
    if (step.kind === "reply") return this.answer(isStream, step, counted, response);
    if (step.kind === "error" && step.delayMs !== undefined) await delay(step.delayMs);
    if (step.kind === "error" && isBadSuccess(step))
      return this.badSuccess(isStream, step, counted, response);
    if (isStream && step.midStreamAfterEvents !== undefined) {
      const events = this.replies
        .streamEvents(this.defaultReply, counted)
        .slice(0, step.midStreamAfterEvents);
      await writeEventStream(response, events, undefined);
      response.end(encodeException(this.exceptionFor(step, counted)));
      return;
    }
    if (step.kind === "error" && step.error === "malformed") return sendMalformed(response, isStream);
    if (step.kind === "error" && step.error === "context_window_exceeded_stop") {
      const reply: FakeReply = {
        kind: "reply",
        text: "Partial answer",
        stopReason: "model_context_window_exceeded",
      };
      return this.answer(isStream, reply, counted, response);
    }
    sendException(response, this.exceptionFor(step, counted));
  }

  /** A 200 the client cannot take as an answer: a gateway page, the other format, or a cut-short stream. */
  private async badSuccess(isStream: boolean, step: FakeError, counted: number, response: Response) {
    const reply: FakeReply = { kind: "reply", text: "An answer in a shape the client did not ask for." };
    if (step.error === "html_page") return sendGatewayPage(response);
    if (step.error === "wrong_format" && isStream) {
      sendJson(response, 200, this.replies.converseBody(reply, counted), {
        "x-amzn-requestid": randomUUID(),
      });
      return;
    }
    if (!isStream && step.error === "truncated_stream") {
      const body = JSON.stringify(this.replies.converseBody(reply, counted));
      response.writeHead(200, { "content-type": "application/json" });
      response.end(body.slice(0, Math.floor(body.length / 2)));
      return;
    }
    const events = this.replies.streamEvents(reply, counted);
    const sent = step.error === "truncated_stream" ? events.slice(0, cutAt(step, events.length, 2)) : events;
    await writeEventStream(response, sent, undefined);
    response.end();
  }

  private async answer(isStream: boolean, reply: FakeReply, counted: number, response: Response) {
    if (reply.holdUntil) await reply.holdUntil;
    if (isStream) {
      const events = this.replies.streamEvents(reply, counted);
      if (reply.hangAfterEvents !== undefined) {
        await writeEventStream(response, events.slice(0, reply.hangAfterEvents), reply.delayMs);
        return hangUntilClosed(response);
      }
      await writeEventStream(response, events, reply.delayMs);
      response.end();
      return;
    }
    if (reply.delayMs !== undefined) await delay(reply.delayMs);
    sendJson(response, 200, this.replies.converseBody(reply, counted), { "x-amzn-requestid": randomUUID() });
  }

  private exceptionFor(step: FakeError | BedrockFakeException, counted: number): ExceptionSpec {
    if (step.kind === "bedrock-exception") {
      const { name, status, message, retryAfterSeconds } = step;
      return { name, status, message, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
    }
    const actual = step.actualTokens ?? counted;
    const limit = step.limitTokens ?? this.contextLimit ?? DEFAULT_CONTEXT_LIMIT;
    return fakeErrorException(step.error, actual, limit, step.retryAfterSeconds);
  }

  private countTokensSupported(modelId: string): boolean {
    if (this.countTokensOverride !== undefined) return this.countTokensOverride;
    if (this.options.countTokensSupported) return this.options.countTokensSupported(modelId);
    return !CROSS_REGION_PREFIX.test(modelId) && !modelId.startsWith("amazon.");
  }
}

/**
 * Starts an in-process Bedrock Runtime fake on 127.0.0.1 over h2c (cleartext HTTP/2), so the SDK's default
 * `NodeHttp2Handler` is exercised. It speaks restJson1 for `converse` and `count-tokens` and binary
 * `application/vnd.amazon.eventstream` framing for `converse-stream`, and answers errors with the
 * `x-amzn-errortype` header and `__type` body field the SDK maps to its exception classes.
 */
export async function startBedrockFake(options: BedrockFakeOptions = {}): Promise<BedrockFakeServer> {
  const handler = new BedrockFakeHandler(options);
  const server = await listenHttp2(
    fakeRequestListener(
      (received, response) => handler.handle(received, response as Response),
      (response, error) =>
        sendException(response as Response, {
          name: "InternalServerException",
          status: 500,
          message: String(error),
        }),
    ),
  );
  return {
    providerId: "bedrock",
    url: `http://127.0.0.1:${server.port}`,
    region: options.region ?? "us-east-1",
    credentials: { accessKeyId: "AKIDUNFORGETFAKE", secretAccessKey: "unforget-fake-secret" },
    requests: handler.requests,
    enqueue: (...steps) => handler.queue.push(...steps),
    enqueueBedrock: (...steps) => handler.queue.push(...steps),
    setContextLimit: (limit) => {
      handler.contextLimit = limit;
    },
    setCountTokensSupported: (supported) => {
      handler.countTokensOverride = supported;
    },
    setResponder: (responder) => {
      handler.responder = responder;
    },
    reset: () => {
      handler.queue.length = 0;
      handler.requests.length = 0;
      handler.contextLimit = undefined;
      handler.countTokensOverride = undefined;
      handler.responder = undefined;
    },
    countTokens: countConverseTokens,
    close: server.close,
  };
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
