import {
  AbortedError,
  type ContentBlock,
  type CountTokensRequest,
  createUsage,
  getModelLimits,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStream,
  type ModelStreamEvent,
  PROVIDER_SPECIFICATION_VERSION,
  PromptTooLongError,
  ProviderRequestError,
  type RequestOptions,
  RequestTooLargeError,
  type TokenCount,
  type UnforgetError,
} from "@unforget/core";
import {
  type FakeError,
  type FakeReply,
  type FakeServerOptions,
  type FakeStep,
  fakeTokenCount,
  type RecordedRequest,
  takeStep,
} from "./fake-script.ts";

export interface FakeModelProviderOptions extends FakeServerOptions {
  /** The `providerId` it reports. Default "fake". */
  providerId?: string;
}

/** A paused model call: the next call waits at the door until `release()`. */
export interface FakeGate {
  /** Resolves once a call is waiting at the gate. */
  readonly reached: Promise<void>;
  /** Lets the waiting call (and every later one) through. */
  release(): void;
}

/**
 * A `ModelProvider` in the process, scripted with the same `FakeStep`s as the wire fakes, for packages that
 * use a provider without being one (memory, compact, session): no SDK, no socket, no dependency on a provider
 * package. It records each call's `ModelRequest` as it was given (`body`, in Unforget's own model), answers
 * with the next step, and maps error steps to the typed errors a real provider throws. It does not retry:
 * retries belong to the provider runtime, which the wire fakes test.
 */
export interface FakeModelProvider extends ModelProvider {
  /** Every call, in order: `operation` is "messages", "stream" or "count_tokens"; `body` is a copy of the request. */
  readonly requests: RecordedRequest[];
  /** Appends steps to the script. */
  enqueue(...steps: FakeStep[]): void;
  /** Changes the context limit for later calls (undefined: no limit). */
  setContextLimit(limit: number | undefined): void;
  /**
   * Holds model calls from now on until released, so that a test can act while a call is in flight without
   * guessing how long it takes.
   */
  hold(): FakeGate;
  /** Forgets the script, the recorded calls, the gate and the context limit. */
  reset(): void;
}

const ERROR_STATUS: Record<string, { status: number; retryable: boolean; type: string }> = {
  rate_limit: { status: 429, retryable: true, type: "rate_limit_error" },
  overloaded: { status: 529, retryable: true, type: "overloaded_error" },
  server_error: { status: 500, retryable: true, type: "api_error" },
  malformed: { status: 200, retryable: true, type: "malformed_response" },
  html_page: { status: 200, retryable: false, type: "unexpected_content_type" },
  wrong_format: { status: 200, retryable: true, type: "wrong_format" },
  truncated_stream: { status: 200, retryable: true, type: "truncated_stream" },
  invalid_request: { status: 400, retryable: false, type: "invalid_request_error" },
  authentication: { status: 401, retryable: false, type: "authentication_error" },
};

/** What one fake provider holds: its script, the calls it recorded, the gate and the context limit. */
interface FakeProviderState {
  readonly options: FakeModelProviderOptions;
  readonly providerId: string;
  readonly requests: RecordedRequest[];
  readonly queue: FakeStep[];
  readonly defaultReply: FakeReply;
  contextLimit: number | undefined;
  gate: { promise: Promise<void>; release: () => void; arrived: () => void } | undefined;
  responses: number;
  toolCalls: number;
}

/** Creates an in-process scripted provider (see `FakeModelProvider`). */
export function createFakeModelProvider(options: FakeModelProviderOptions = {}): FakeModelProvider {
  const state: FakeProviderState = {
    options,
    providerId: options.providerId ?? "fake",
    requests: [],
    queue: [],
    defaultReply: options.defaultReply ?? { kind: "reply", text: "Hello from the fake provider." },
    contextLimit: options.contextLimit,
    gate: undefined,
    responses: 0,
    toolCalls: 0,
  };
  const { providerId, requests, queue } = state;

  const provider: FakeModelProvider = {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId,
    capabilities: {
      nativeTokenCounting: true,
      nativeContextManagement: false,
      promptCaching: false,
      thinking: true,
    },
    requests,
    enqueue(...steps) {
      queue.push(...steps);
    },
    setContextLimit(limit) {
      state.contextLimit = limit;
    },
    hold() {
      return holdGate(state);
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      state.gate?.release();
      state.gate = undefined;
      state.contextLimit = options.contextLimit;
    },
    createMessage(request, requestOptions) {
      return fakeCall(state, request, "messages", requestOptions);
    },
    streamMessage(request, requestOptions): ModelStream {
      const response = fakeCall(state, request, "stream", requestOptions);
      // Nobody may await it yet; the rejection is delivered through iteration or finalResponse().
      response.catch(() => undefined);
      return {
        finalResponse: () => response,
        async *[Symbol.asyncIterator](): AsyncIterator<ModelStreamEvent> {
          yield* streamEvents(await response);
        },
      };
    },
    countTokens(request, requestOptions = {}) {
      return fakeCountTokens(state, request, requestOptions);
    },
    getModelLimits(model) {
      return getModelLimits(model);
    },
  };
  return provider;
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(new AbortedError());
      },
      { once: true },
    );
  });
}

function untilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    signal?.addEventListener("abort", () => reject(new AbortedError()), { once: true });
  });
}

/** The error a scripted step stands for, as a provider would throw it. */
function errorOf(state: FakeProviderState, step: FakeError, request: ModelRequest): UnforgetError {
  const { providerId, contextLimit } = state;
  if (step.error === "prompt_too_long" || step.error === "prompt_too_long_generic") {
    const actual = step.actualTokens ?? fakeTokenCount(request);
    const limit = step.limitTokens ?? contextLimit;
    return new PromptTooLongError(
      step.error === "prompt_too_long" && limit !== undefined
        ? `prompt is too long: ${actual} tokens > ${limit} maximum`
        : "Input is too long for the requested model.",
      {
        providerId,
        source: "error-response",
        ...(step.error === "prompt_too_long" ? { actualTokens: actual } : {}),
        ...(step.error === "prompt_too_long" && limit !== undefined ? { limitTokens: limit } : {}),
      },
    );
  }
  if (step.error === "context_window_exceeded_stop") {
    return new PromptTooLongError("The model stopped: the context window was exceeded.", {
      providerId,
      source: "stop-reason",
    });
  }
  if (step.error === "request_too_large") {
    return new RequestTooLargeError("Request exceeds the maximum allowed number of bytes.", {
      providerId,
      status: 413,
    });
  }
  const known = ERROR_STATUS[step.error] ?? { status: 500, retryable: true, type: step.error };
  return new ProviderRequestError(`The fake provider answered with a scripted ${step.error} error.`, {
    providerId,
    status: known.status,
    retryable: known.retryable,
    providerErrorType: known.type,
    ...(step.retryAfterSeconds === undefined ? {} : { retryAfterMs: step.retryAfterSeconds * 1_000 }),
  });
}

/** The response a scripted reply stands for, with fake ids and usage. */
function respond(state: FakeProviderState, reply: FakeReply, request: ModelRequest): ModelResponse {
  const content: ContentBlock[] = [];
  if (reply.thinking !== undefined) {
    content.push({ type: "thinking", thinking: reply.thinking, signature: "fake-signature" });
  }
  if (reply.text !== undefined) content.push({ type: "text", text: reply.text });
  for (const call of reply.toolCalls ?? []) {
    state.toolCalls++;
    content.push({
      type: "tool_use",
      id: call.id ?? `toolu_fake_${state.toolCalls}`,
      name: call.name,
      input: call.input,
    });
  }
  for (const raw of reply.rawBlocks ?? []) content.push(raw as ContentBlock);
  state.responses++;
  return {
    id: `msg_fake_${state.responses}`,
    model: request.model,
    role: "assistant",
    content,
    stopReason: reply.stopReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_use" : "end_turn"),
    usage: createUsage({
      inputTokens: fakeTokenCount({
        system: request.system,
        messages: request.messages,
        tools: request.tools,
      }),
      outputTokens: fakeTokenCount(content),
      ...reply.usage,
    }),
  };
}

/** One model call: record, pass the gate, take the step, answer or throw. */
async function fakeCall(
  state: FakeProviderState,
  request: ModelRequest,
  operation: string,
  options: RequestOptions = {},
): Promise<ModelResponse> {
  const { requests, queue, gate } = state;
  // A copy, as a wire fake would have received it: callers reuse and extend their message arrays.
  const body = structuredClone(request);
  requests.push({ method: "CALL", path: operation, headers: { ...options.headers }, body, operation });
  if (options.signal?.aborted) throw new AbortedError();
  if (gate) {
    gate.arrived();
    await Promise.race([gate.promise, untilAborted(options.signal)]);
  }
  const contextLimit = state.contextLimit;
  if (contextLimit !== undefined) {
    const tokens = fakeTokenCount({
      system: request.system,
      messages: request.messages,
      tools: request.tools,
    });
    if (tokens > contextLimit)
      throw errorOf(state, { kind: "error", error: "prompt_too_long", actualTokens: tokens }, request);
  }
  const step = takeStep(queue, false) ?? state.defaultReply;
  if (step.kind === "hang") return untilAborted(options.signal);
  if (step.kind === "reply" && step.holdUntil) await step.holdUntil;
  if (step.delayMs !== undefined) await wait(step.delayMs, options.signal);
  if (step.kind === "error") throw errorOf(state, step, request);
  return respond(state, step, request);
}

/** A gate every model call waits at until released; `reached` settles when the first call arrives. */
function holdGate(state: FakeProviderState): FakeGate {
  let release: () => void = () => undefined;
  let arrived: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  state.gate = { promise, release, arrived };
  return {
    reached,
    release() {
      release();
      state.gate = undefined;
    },
  };
}

/** A native-looking token count, recorded like a call; a scripted hang or error may answer instead. */
async function fakeCountTokens(
  state: FakeProviderState,
  request: CountTokensRequest,
  requestOptions: RequestOptions,
): Promise<TokenCount> {
  const body = structuredClone(request);
  state.requests.push({ method: "CALL", path: "count_tokens", headers: {}, body, operation: "count_tokens" });
  const step = takeStep(state.queue, true);
  if (step?.kind === "hang") return untilAborted(requestOptions.signal);
  if (step?.kind === "error") throw errorOf(state, step, { ...request, maxTokens: request.maxTokens ?? 0 });
  return {
    inputTokens: fakeTokenCount({
      system: request.system,
      messages: request.messages,
      tools: request.tools,
    }),
    method: "native",
  };
}

/** The events a provider would stream for a whole response, in order. */
function* streamEvents(response: ModelResponse): Generator<ModelStreamEvent> {
  yield {
    type: "message_start",
    id: response.id,
    model: response.model,
    usage: { ...response.usage, outputTokens: 0 },
  };
  for (const [index, block] of response.content.entries()) {
    if (block.type === "text") {
      yield { type: "block_start", index, block: { type: "text", text: "" } };
      yield { type: "text_delta", index, text: block.text };
    } else if (block.type === "thinking") {
      yield { type: "block_start", index, block: { type: "thinking", thinking: "" } };
      yield { type: "thinking_delta", index, thinking: block.thinking };
      if (block.signature !== undefined) yield { type: "signature_delta", index, signature: block.signature };
    } else if (block.type === "tool_use") {
      yield { type: "block_start", index, block: { ...block, input: {} } };
      yield { type: "tool_input_delta", index, partialJson: JSON.stringify(block.input) };
    } else {
      yield { type: "block_start", index, block };
    }
    yield { type: "block_stop", index };
  }
  yield {
    type: "message_delta",
    stopReason: response.stopReason,
    usage: { outputTokens: response.usage.outputTokens },
  };
  yield { type: "message_stop" };
}
