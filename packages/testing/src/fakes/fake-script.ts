import type { StopReason, Usage } from "@unforget/core";

/**
 * The scripting model shared by every fake provider server. A test enqueues steps; each request the fake
 * receives consumes the next step (or the default reply when the queue is empty). The same script drives
 * the Anthropic, Bedrock and Vertex fakes, so one contract suite can run against all three.
 */
export interface FakeToolCall {
  /** Defaults to a deterministic id (`toolu_fake_<n>` or the provider's style). */
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface FakeReply {
  kind: "reply";
  text?: string;
  thinking?: string;
  toolCalls?: FakeToolCall[];
  /** Defaults to "tool_use" when toolCalls are present, else "end_turn". */
  stopReason?: StopReason;
  /** Overrides the deterministic usage the fake computes. */
  usage?: Partial<Usage>;
  /** Wait this long before answering (or between stream frames, for streams). */
  delayMs?: number;
  /**
   * Answer only once this settles: the test holds the call while it acts (types a prompt, cancels, reads a
   * state) and then releases it, without racing a timer. The request is recorded when it arrives.
   */
  holdUntil?: Promise<unknown>;
  /**
   * For a stream: send this many of the reply's events, then hang until the client cancels (or the server
   * closes), so a test can abort in the middle of a stream without racing a timer. Ignored without a stream.
   */
  hangAfterEvents?: number;
  /** Extra raw content blocks (provider wire format) appended verbatim, to test unknown-block preservation. */
  rawBlocks?: unknown[];
}

export type FakeErrorKind =
  /** 429 with a retry-after header. */
  | "rate_limit"
  /** Anthropic 529 overloaded_error; Bedrock ServiceUnavailable/ModelNotReady; Vertex 503. */
  | "overloaded"
  /** 500. */
  | "server_error"
  /** 200 with a body that is not valid for the protocol. */
  | "malformed"
  /** The provider's prompt-too-long error with numbers (actual/limit from the step or the context limit). */
  | "prompt_too_long"
  /** The provider's prompt-too-long wording without numbers, where one exists (Bedrock "Input is too long"). */
  | "prompt_too_long_generic"
  /** Anthropic 413 request_too_large (bytes). */
  | "request_too_large"
  /** A 200 response whose stop reason is model_context_window_exceeded. */
  | "context_window_exceeded_stop"
  /** 400 invalid request unrelated to size. */
  | "invalid_request"
  /** 401/403. */
  | "authentication"
  /** 200 with a `text/html` body (a gateway's sign-in page) instead of the API's answer. */
  | "html_page"
  /** 200 in the other format: an event stream to a non-streamed request, a JSON body to a streamed one. */
  | "wrong_format"
  /**
   * A stream that ends cleanly before its end-of-message event: after `midStreamAfterEvents` events, by
   * default all but the closing ones. A non-streamed request gets its body cut short.
   */
  | "truncated_stream";

export interface FakeError {
  kind: "error";
  error: FakeErrorKind;
  /** For stream requests: emit this many normal events first, then the error in-stream (or, truncated, the end). */
  midStreamAfterEvents?: number;
  actualTokens?: number;
  limitTokens?: number;
  retryAfterSeconds?: number;
  delayMs?: number;
}

/** Never answer (until the request is aborted or the server closes): for abort and timeout tests. */
export interface FakeHang {
  kind: "hang";
}

export type FakeStep = FakeReply | FakeError | FakeHang;

/** What the fake saw, for assertions (headers lower-cased; body parsed JSON when it was JSON). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** "messages", "stream", "count_tokens", "models", … in the provider's terms. */
  operation: string;
  /**
   * Set when the request met a scripted hang and its connection then closed: the client cancelled it (or
   * the fake was closed). Absent while it still hangs, so an abort that only abandons the request shows.
   */
  closedDuringHang?: boolean;
}

/**
 * Answers a model call when the script queue is empty, before the default reply: a test driving a long session
 * picks each step from the request (a summary for a compaction call, the next tool call otherwise). Returning
 * undefined falls back to the default reply. Never consulted for counting calls.
 */
export type FakeResponder = (request: RecordedRequest) => FakeStep | undefined;

export interface FakeServerOptions {
  /** Deterministic context limit; requests whose counted tokens exceed it get the provider's overflow error. */
  contextLimit?: number;
  /** Reply used when the script queue is empty (and the responder, if any, has no answer). */
  defaultReply?: FakeReply;
  /** Decides the step of a model call when the script queue is empty. */
  respond?: FakeResponder;
}

/** A running fake. Start one per test (or per file) on 127.0.0.1 and close it afterwards. */
export interface FakeProviderServer {
  /** Provider id this fake imitates. */
  readonly providerId: string;
  /** Base URL (or endpoint) the provider factory should be pointed at. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Appends steps to the script. */
  enqueue(...steps: FakeStep[]): void;
  /** Changes the context limit for later requests (undefined: no limit). */
  setContextLimit(limit: number | undefined): void;
  /** Sets (or with undefined removes) the responder consulted when the script queue is empty. */
  setResponder(responder: FakeResponder | undefined): void;
  /** Forgets the script, the responder, the recorded requests and the context limit: a fresh start between scenarios. */
  reset(): void;
  /**
   * The fake's deterministic token count for a request body in its wire format; its countTokens endpoint
   * and its usage numbers use the same function, so tests can predict them.
   */
  countTokens(body: unknown): number;
  close(): Promise<void>;
}

/**
 * Deterministic token count used by all fakes: one token per 4 characters of the JSON of the parts that
 * carry content, rounded up. Exposed so tests can predict usage and overflow.
 */
export function fakeTokenCount(payload: unknown): number {
  return Math.ceil(JSON.stringify(payload ?? "").length / 4);
}

/**
 * The step a request consumes under the shared scripting rule: a model call takes the next step; a
 * counting call takes it only when it is an error or a hang, never a reply meant for a model call.
 * Undefined when the request consumes nothing (the fake then uses its default answer).
 */
export function takeStep<Step extends { kind: string }>(queue: Step[], counting: boolean): Step | undefined {
  const head = queue[0];
  if (counting && (head === undefined || head.kind === "reply")) return undefined;
  return queue.shift();
}

/**
 * The step a request consumes: the script's (see `takeStep`), else for a model call the responder's answer.
 * Undefined means the fake's default answer.
 */
export function nextStep<Step extends { kind: string }>(
  queue: Step[],
  counting: boolean,
  responder: FakeResponder | undefined,
  request: RecordedRequest,
): Step | FakeStep | undefined {
  return takeStep(queue, counting) ?? (counting || responder === undefined ? undefined : responder(request));
}

/** The 200 body of a `html_page` step: what a gateway or captive portal answers in place of an API. */
export const FAKE_GATEWAY_PAGE =
  '<!DOCTYPE html><html><head><title>Sign in - Example Gateway</title></head><body><form action="/login">' +
  '<input name="user"><input name="password" type="password"></form></body></html>';

/** Is this error step one of the 200s a client cannot understand (answered by the fake's own format rules)? */
export function isBadSuccess(step: FakeError): boolean {
  return step.error === "html_page" || step.error === "wrong_format" || step.error === "truncated_stream";
}

/**
 * Where a `truncated_stream` step cuts a stream of `length` events whose last `closing` events end the
 * message: after `midStreamAfterEvents`, but never so late that the end is sent.
 */
export function cutAt(step: FakeError, length: number, closing: number): number {
  return Math.min(step.midStreamAfterEvents ?? length, Math.max(0, length - closing));
}
