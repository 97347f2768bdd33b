import {
  AbortedError,
  type ContentBlock,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  PromptTooLongError,
  ProviderRequestError,
  type RequestMessage,
  RequestTooLargeError,
  UnforgetError,
} from "@unforget/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { FakeProviderServer, FakeServerOptions } from "../fakes/fake-script.ts";

/** Settings the suite passes to `createProvider`; providers must honour them so scenarios stay fast. */
export interface ContractProviderSettings {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff delay in milliseconds (tiny in the suite so retry scenarios take milliseconds). */
  initialRetryDelayMs: number;
}

/** What a provider supports; scenarios that do not apply are skipped, never weakened. */
export interface ProviderContractCapabilities {
  /** `countTokens` for `model` uses the provider's counting endpoint (method "native"). */
  nativeTokenCounting: boolean;
  /**
   * A model id for which native counting is unsupported (Bedrock cross-region ids, an Anthropic-compatible
   * server without the endpoint, …): counting it must fall back to the heuristic. Omit when none exists.
   */
  unsupportedCountingModel?: string;
  /** The fake reports cache creation tokens (Vertex has only cache reads). */
  cacheCreationUsage: boolean;
  /** The provider has a prompt-too-long wording without numbers (`prompt_too_long_generic`). */
  genericPromptTooLong: boolean;
  /** The provider can report a 200 response stopped by `model_context_window_exceeded`. */
  contextWindowExceededStop: boolean;
  /** The provider can fail mid-stream with a prompt-too-long error. */
  midStreamPromptTooLong: boolean;
  /** The provider has a byte-size limit error distinct from token overflow (Anthropic 413 `request_too_large`). */
  requestTooLarge: boolean;
  /** Thinking text is streamed and returned as thinking blocks. */
  thinking: boolean;
  /**
   * Aborting cancels the HTTP request itself, so the server sees the connection (or HTTP/2 stream) close.
   * False or absent when the SDK offers no cancellation and an aborted request is only abandoned.
   */
  abortClosesConnection?: boolean;
  /**
   * Unknown-block preservation. `replyBlock` is a raw block in the provider's wire format that the fake puts
   * into a reply; `original` is what the provider must hand back as `UnknownBlock.original`.
   * `sentUnchanged`: an `UnknownBlock` sent in a request goes out as `original`, unchanged.
   */
  unknownBlocks?: {
    replyBlock: unknown;
    original: { type: string; [key: string]: unknown };
    sentUnchanged: boolean;
  };
}

/**
 * Fakes used with the suite must follow one scripting rule: a model call (create or stream) consumes the
 * next step; a counting call consumes the next step only when it is an error or a hang, never a reply.
 */
export interface ProviderContractOptions<Fake extends FakeProviderServer = FakeProviderServer> {
  /** Used in the describe title. */
  name: string;
  /** Starts the provider's fake; called once per test file. */
  startFake: (options?: FakeServerOptions) => Promise<Fake>;
  /** Builds the provider under test, pointed at the fake, honouring the suite's settings. */
  createProvider: (fake: Fake, settings: ContractProviderSettings) => ModelProvider;
  /** Model id in the provider's naming. */
  model: string;
  capabilities: ProviderContractCapabilities;
  /** Per-scenario timeout in milliseconds (default 30 000); a hang past it fails the scenario. */
  timeoutMs?: number;
}

const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

const TIME_TOOL = {
  name: "get_time",
  description: "Current local time for a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

function userText(text: string): RequestMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

/** True when `needle` occurs (deep-equal) anywhere inside `haystack`. */
export function containsDeep(haystack: unknown, needle: unknown): boolean {
  if (JSON.stringify(haystack) === JSON.stringify(needle)) return true;
  if (Array.isArray(haystack)) return haystack.some((item) => containsDeep(item, needle));
  if (typeof haystack === "object" && haystack !== null) {
    return Object.values(haystack).some((value) => containsDeep(value, needle));
  }
  return false;
}

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function captureError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("Expected the call to fail, but it succeeded.");
}

/**
 * The provider contract: every `ModelProvider` must pass it against its wire-faithful fake with its real
 * SDK. Scenarios a provider's capabilities rule out are skipped (and show as skipped in the report).
 */
export function describeProviderContract<Fake extends FakeProviderServer>(
  options: ProviderContractOptions<Fake>,
): void {
  const { capabilities, model } = options;
  const timeout = options.timeoutMs ?? 30_000;
  const settings: ContractProviderSettings = { maxRetries: 2, initialRetryDelayMs: 1 };

  describe(`provider contract: ${options.name}`, () => {
    let fake: Fake;
    let provider: ModelProvider;
    const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
      model,
      maxTokens: 256,
      messages: [userText("What is the weather in Paris and in Rome?")],
      ...overrides,
    });
    const lastRequestBody = () => fake.requests.at(-1)?.body;
    const withProvider = (override: Partial<ContractProviderSettings>) =>
      options.createProvider(fake, { ...settings, ...override });

    beforeAll(async () => {
      fake = await options.startFake();
      provider = options.createProvider(fake, settings);
    });
    afterAll(async () => {
      await fake?.close();
    });
    beforeEach(() => {
      fake.setContextLimit(undefined);
      fake.requests.length = 0;
    });

    it("declares the contract version and its provider id", () => {
      expect(provider.specificationVersion).toBe("unforget-provider-v1");
      expect(provider.providerId).toBe(fake.providerId);
      expect(provider.capabilities.nativeTokenCounting).toBe(capabilities.nativeTokenCounting);
      const limits = provider.getModelLimits(model);
      expect(limits.contextWindow).toBeGreaterThan(0);
      expect(limits.maxOutputTokens).toBeGreaterThan(0);
    });

    it(
      "round trip with parallel tool calls: two tool_use blocks, results sent back, final answer",
      async () => {
        fake.enqueue({
          kind: "reply",
          text: "Checking both.",
          toolCalls: [
            { id: "call_paris", name: "get_weather", input: { city: "Paris" } },
            { id: "call_rome", name: "get_time", input: { city: "Rome" } },
          ],
        });
        const first = await provider.createMessage(request({ tools: [WEATHER_TOOL, TIME_TOOL] }));
        expect(first.stopReason).toBe("tool_use");
        const toolUses = first.content.filter((block) => block.type === "tool_use");
        expect(toolUses).toHaveLength(2);
        expect(toolUses.map((block) => [block.name, block.input])).toEqual([
          ["get_weather", { city: "Paris" }],
          ["get_time", { city: "Rome" }],
        ]);
        const ids = toolUses.map((block) => block.id);
        expect(new Set(ids).size).toBe(2);

        fake.enqueue({ kind: "reply", text: "Paris is sunny at 21C; it is 14:05 in Rome." });
        const second = await provider.createMessage(
          request({
            tools: [WEATHER_TOOL, TIME_TOOL],
            messages: [
              userText("What is the weather in Paris and in Rome?"),
              { role: "assistant", content: first.content },
              {
                role: "user",
                content: [
                  { type: "tool_result", tool_use_id: ids[0] ?? "", content: "21C, sunny" },
                  { type: "tool_result", tool_use_id: ids[1] ?? "", content: "14:05" },
                ],
              },
            ],
          }),
        );
        expect(second.stopReason).toBe("end_turn");
        expect(second.content).toEqual([
          { type: "text", text: "Paris is sunny at 21C; it is 14:05 in Rome." },
        ]);
        const sent = JSON.stringify(lastRequestBody());
        expect(sent).toContain("21C, sunny");
        expect(sent).toContain("14:05");
        expect(sent).toContain("get_weather");
        expect(sent).toContain("Paris");
      },
      timeout,
    );

    it(
      "streaming equals non-streaming: same content, usage and stop reason",
      async () => {
        const reply = {
          kind: "reply" as const,
          text: "Let me look that up for you.",
          ...(capabilities.thinking ? { thinking: "The user wants two cities." } : {}),
          toolCalls: [
            { id: "call_a", name: "get_weather", input: { city: "Paris", units: { temperature: "C" } } },
            { id: "call_b", name: "get_weather", input: { city: "Rome" } },
          ],
          usage: { inputTokens: 120, outputTokens: 45 },
        };
        fake.enqueue(reply);
        const whole = await provider.createMessage(request({ tools: [WEATHER_TOOL] }));
        fake.enqueue(reply);
        const stream = provider.streamMessage(request({ tools: [WEATHER_TOOL] }));
        const events = await collect(stream);
        const streamed = await stream.finalResponse();

        expect(streamed.content).toEqual(whole.content);
        expect(streamed.usage).toEqual(whole.usage);
        expect(streamed.stopReason).toBe(whole.stopReason);
        expect(streamed.stopReason).toBe("tool_use");
        expect(events[0]?.type).toBe("message_start");
        expect(events.at(-1)?.type).toBe("message_stop");
        const text = events
          .filter((event) => event.type === "text_delta")
          .map((event) => (event.type === "text_delta" ? event.text : ""))
          .join("");
        expect(text).toBe("Let me look that up for you.");
        if (capabilities.thinking) {
          expect(whole.content.some((block) => block.type === "thinking")).toBe(true);
          expect(events.some((event) => event.type === "thinking_delta")).toBe(true);
        }
      },
      timeout,
    );

    it(
      "usage is normalised: input, output, cache creation and cache read, for create and stream",
      async () => {
        const usage = {
          inputTokens: 1000,
          outputTokens: 77,
          cacheCreationInputTokens: capabilities.cacheCreationUsage ? 300 : 0,
          cacheReadInputTokens: 1800,
        };
        fake.enqueue({ kind: "reply", text: "cached", usage });
        const whole = await provider.createMessage(request());
        expect(whole.usage).toEqual(usage);
        fake.enqueue({ kind: "reply", text: "cached", usage });
        const streamed = await provider.streamMessage(request()).finalResponse();
        expect(streamed.usage).toEqual(usage);
      },
      timeout,
    );

    it(
      "default usage matches the fake's deterministic count of the request",
      async () => {
        fake.enqueue({ kind: "reply", text: "counted" });
        const response = await provider.createMessage(request({ system: "You are terse." }));
        const expected = fake.countTokens(lastRequestBody());
        expect(
          response.usage.inputTokens +
            response.usage.cacheCreationInputTokens +
            response.usage.cacheReadInputTokens,
        ).toBe(expected);
        expect(response.usage.outputTokens).toBeGreaterThan(0);
      },
      timeout,
    );

    it.runIf(capabilities.nativeTokenCounting)(
      "countTokens is native and equals the fake's count of the counting request",
      async () => {
        const counted = await provider.countTokens({
          model,
          system: "You are terse.",
          tools: [WEATHER_TOOL],
          messages: [
            userText("Count me, please."),
            { role: "assistant", content: [{ type: "text", text: "Sure." }] },
            userText("Thanks"),
          ],
        });
        expect(counted.method).toBe("native");
        expect(counted.inputTokens).toBe(fake.countTokens(lastRequestBody()));
        expect(counted.inputTokens).toBeGreaterThan(0);

        // A pre-flight count never consumes a reply scripted for the model call that follows it.
        fake.enqueue({ kind: "reply", text: "after the count" });
        await provider.countTokens({ model, messages: [userText("Count me, please.")] });
        const response = await provider.createMessage(request());
        expect(response.content).toEqual([{ type: "text", text: "after the count" }]);
      },
      timeout,
    );

    it(
      "countTokens falls back to the heuristic when the native endpoint fails, and never throws",
      async () => {
        const noRetries = withProvider({ maxRetries: 0 });
        fake.enqueue({ kind: "error", error: "server_error" });
        const counted = await noRetries.countTokens({ model, messages: [userText("Count me, please.")] });
        expect(counted.method).toBe("heuristic");
        expect(counted.inputTokens).toBeGreaterThan(0);
        if (capabilities.nativeTokenCounting) expect(counted.fallbackReason).toBeTruthy();
      },
      timeout,
    );

    it.runIf(capabilities.unsupportedCountingModel !== undefined)(
      "countTokens uses the heuristic for a model without native counting",
      async () => {
        const counted = await provider.countTokens({
          model: capabilities.unsupportedCountingModel ?? model,
          messages: [userText("Count me, please.")],
        });
        expect(counted.method).toBe("heuristic");
        expect(counted.inputTokens).toBeGreaterThan(0);
      },
      timeout,
    );

    describe("every overflow form becomes PromptTooLongError", () => {
      it(
        "error response with numbers: tokenGap = actual - limit (create and stream)",
        async () => {
          fake.enqueue({
            kind: "error",
            error: "prompt_too_long",
            actualTokens: 250_000,
            limitTokens: 200_000,
          });
          const error = await captureError(provider.createMessage(request()));
          expect(error).toBeInstanceOf(PromptTooLongError);
          const overflow = error as PromptTooLongError;
          expect(overflow.actualTokens).toBe(250_000);
          expect(overflow.limitTokens).toBe(200_000);
          expect(overflow.tokenGap).toBe(50_000);
          expect(overflow.providerId).toBe(provider.providerId);
          expect(fake.requests).toHaveLength(1);

          fake.enqueue({
            kind: "error",
            error: "prompt_too_long",
            actualTokens: 1_200_000,
            limitTokens: 1_048_576,
          });
          const streamError = await captureError(provider.streamMessage(request()).finalResponse());
          expect(streamError).toBeInstanceOf(PromptTooLongError);
          expect((streamError as PromptTooLongError).tokenGap).toBe(151_424);
        },
        timeout,
      );

      it(
        "the fake's context limit produces the real error, with the fake's own count",
        async () => {
          fake.setContextLimit(5);
          const error = await captureError(provider.createMessage(request()));
          expect(error).toBeInstanceOf(PromptTooLongError);
          const counted = fake.countTokens(lastRequestBody());
          expect((error as PromptTooLongError).actualTokens).toBe(counted);
          expect((error as PromptTooLongError).limitTokens).toBe(5);
          expect((error as PromptTooLongError).tokenGap).toBe(counted - 5);
        },
        timeout,
      );

      it(
        "the maximum an overflow error states becomes getModelLimits(model).contextWindow, never higher",
        async () => {
          const overflow = (actualTokens: number, limitTokens: number, midStreamAfterEvents?: number) =>
            fake.enqueue({
              kind: "error",
              error: "prompt_too_long",
              actualTokens,
              limitTokens,
              ...(midStreamAfterEvents === undefined ? {} : { midStreamAfterEvents }),
            });
          // A fresh instance: what a provider learns stays in that instance.
          const learning = withProvider({});
          const before = learning.getModelLimits(model);

          overflow(70_000, 65_536);
          expect(await captureError(learning.createMessage(request()))).toBeInstanceOf(PromptTooLongError);
          expect(learning.getModelLimits(model).contextWindow).toBe(65_536);
          expect(learning.getModelLimits(model).maxOutputTokens).toBe(before.maxOutputTokens);

          overflow(40_000, 32_768);
          const streamed = await captureError(learning.streamMessage(request()).finalResponse());
          expect(streamed).toBeInstanceOf(PromptTooLongError);
          expect(learning.getModelLimits(model).contextWindow).toBe(32_768);

          if (capabilities.midStreamPromptTooLong) {
            overflow(20_000, 16_384, 2);
            const midStream = await captureError(learning.streamMessage(request()).finalResponse());
            expect(midStream).toBeInstanceOf(PromptTooLongError);
            expect(learning.getModelLimits(model).contextWindow).toBe(16_384);
          }
          const learned = learning.getModelLimits(model).contextWindow;

          // A larger stated maximum later (another region's quota, a stale cap) does not raise it again.
          overflow(140_000, 131_072);
          await captureError(learning.createMessage(request()));
          expect(learning.getModelLimits(model).contextWindow).toBe(learned);
          expect(withProvider({}).getModelLimits(model).contextWindow).toBe(before.contextWindow);

          // An error never raises a known window.
          if (before.known) {
            const fresh = withProvider({});
            overflow(before.contextWindow * 2, before.contextWindow + 1_000);
            await captureError(fresh.createMessage(request()));
            expect(fresh.getModelLimits(model).contextWindow).toBe(before.contextWindow);
          }
        },
        timeout,
      );

      it.runIf(capabilities.genericPromptTooLong)(
        "generic wording without numbers: tokenGap undefined",
        async () => {
          fake.enqueue({ kind: "error", error: "prompt_too_long_generic" });
          const error = await captureError(provider.createMessage(request()));
          expect(error).toBeInstanceOf(PromptTooLongError);
          expect((error as PromptTooLongError).tokenGap).toBeUndefined();
        },
        timeout,
      );

      it.runIf(capabilities.midStreamPromptTooLong)(
        "mid-stream error after some events: PromptTooLongError from the iterator and finalResponse",
        async () => {
          fake.enqueue({
            kind: "error",
            error: "prompt_too_long",
            actualTokens: 210_000,
            limitTokens: 200_000,
            midStreamAfterEvents: 2,
          });
          const stream = provider.streamMessage(request());
          const seen: ModelStreamEvent[] = [];
          const error = await captureError(
            (async () => {
              for await (const event of stream) seen.push(event);
            })(),
          );
          expect(error).toBeInstanceOf(PromptTooLongError);
          expect((error as PromptTooLongError).tokenGap).toBe(10_000);
          expect(seen.length).toBeGreaterThan(0);
          await expect(stream.finalResponse()).rejects.toBeInstanceOf(PromptTooLongError);
          expect(fake.requests).toHaveLength(1);
        },
        timeout,
      );

      it.runIf(capabilities.contextWindowExceededStop)(
        "a 200 response with stop reason model_context_window_exceeded (create and stream)",
        async () => {
          fake.enqueue({ kind: "error", error: "context_window_exceeded_stop" });
          const error = await captureError(provider.createMessage(request()));
          expect(error).toBeInstanceOf(PromptTooLongError);
          expect((error as PromptTooLongError).source).toBe("stop-reason");
          fake.enqueue({ kind: "error", error: "context_window_exceeded_stop" });
          const streamError = await captureError(provider.streamMessage(request()).finalResponse());
          expect(streamError).toBeInstanceOf(PromptTooLongError);
        },
        timeout,
      );

      it.runIf(capabilities.requestTooLarge)(
        "a byte-size rejection is RequestTooLargeError, not a token overflow",
        async () => {
          fake.enqueue({ kind: "error", error: "request_too_large" });
          const error = await captureError(provider.createMessage(request()));
          expect(error).toBeInstanceOf(RequestTooLargeError);
          expect(error).not.toBeInstanceOf(PromptTooLongError);
          expect(fake.requests).toHaveLength(1);
        },
        timeout,
      );
    });

    describe("retries", () => {
      it(
        "retries rate limits, overload and server errors, then succeeds",
        async () => {
          fake.enqueue(
            { kind: "error", error: "rate_limit", retryAfterSeconds: 0 },
            { kind: "error", error: "overloaded" },
            { kind: "reply", text: "third time lucky" },
          );
          const response = await provider.createMessage(request());
          expect(response.content).toEqual([{ type: "text", text: "third time lucky" }]);
          expect(fake.requests).toHaveLength(3);

          fake.enqueue(
            { kind: "error", error: "server_error" },
            { kind: "reply", text: "streamed after retry" },
          );
          const streamed = await provider.streamMessage(request()).finalResponse();
          expect(streamed.content).toEqual([{ type: "text", text: "streamed after retry" }]);
          expect(fake.requests).toHaveLength(5);
        },
        timeout,
      );

      it(
        "never retries a stream once events have reached the caller, even for a retryable error",
        async () => {
          // Only the error is scripted (a leftover reply would leak into later scenarios): a retry would get
          // the fake's default reply and show as a second request and a second message_start.
          fake.enqueue({ kind: "error", error: "overloaded", midStreamAfterEvents: 2 });
          const stream = provider.streamMessage(request());
          const seen: ModelStreamEvent[] = [];
          const error = await captureError(
            (async () => {
              for await (const event of stream) seen.push(event);
            })(),
          );
          expect(seen.length).toBeGreaterThan(0);
          expect(error).toBeInstanceOf(ProviderRequestError);
          expect(error).not.toBeInstanceOf(PromptTooLongError);
          await expect(stream.finalResponse()).rejects.toBeInstanceOf(ProviderRequestError);
          expect(seen.filter((event) => event.type === "message_start")).toHaveLength(1);
          expect(fake.requests).toHaveLength(1);
        },
        timeout,
      );

      it(
        "gives up after maxRetries with a retryable ProviderRequestError",
        async () => {
          fake.enqueue(
            { kind: "error", error: "overloaded" },
            { kind: "error", error: "overloaded" },
            { kind: "error", error: "overloaded" },
          );
          const error = await captureError(provider.createMessage(request()));
          expect(error).toBeInstanceOf(ProviderRequestError);
          expect((error as ProviderRequestError).retryable).toBe(true);
          expect((error as ProviderRequestError).providerId).toBe(provider.providerId);
          expect(fake.requests).toHaveLength(settings.maxRetries + 1);
        },
        timeout,
      );

      it(
        "honours maxRetries per call and never retries a non-retryable error",
        async () => {
          fake.enqueue({ kind: "error", error: "rate_limit", retryAfterSeconds: 0 });
          const once = await captureError(provider.createMessage(request(), { maxRetries: 0 }));
          expect(once).toBeInstanceOf(ProviderRequestError);
          expect((once as ProviderRequestError).status).toBe(429);
          expect(fake.requests).toHaveLength(1);

          fake.enqueue({ kind: "error", error: "invalid_request" });
          const invalid = await captureError(provider.createMessage(request()));
          expect(invalid).toBeInstanceOf(ProviderRequestError);
          expect((invalid as ProviderRequestError).retryable).toBe(false);
          expect(fake.requests).toHaveLength(2);

          fake.enqueue({ kind: "error", error: "authentication" });
          const denied = await captureError(provider.createMessage(request()));
          expect(denied).toBeInstanceOf(ProviderRequestError);
          expect((denied as ProviderRequestError).retryable).toBe(false);
          expect(fake.requests).toHaveLength(3);
        },
        timeout,
      );

      it(
        "a malformed response body is a typed error, never a crash or a hang",
        async () => {
          fake.enqueue({ kind: "error", error: "malformed" });
          const error = await captureError(provider.createMessage(request(), { maxRetries: 0 }));
          expect(error).toBeInstanceOf(UnforgetError);
          expect(fake.requests).toHaveLength(1);
        },
        timeout,
      );
    });

    describe("timeouts", () => {
      it(
        "a per-attempt timeout fails a request that never answers, as a retryable ProviderRequestError",
        async () => {
          fake.enqueue({ kind: "hang" });
          const error = await captureError(
            provider.createMessage(request(), { timeoutMs: 100, maxRetries: 0 }),
          );
          expect(error).toBeInstanceOf(ProviderRequestError);
          expect((error as ProviderRequestError).retryable).toBe(true);
        },
        timeout,
      );

      it(
        "a per-attempt timeout bounds the wait for a stream's first event, not how long the stream takes",
        async () => {
          // Frames 60 ms apart: the whole stream lasts far longer than the 150 ms timeout.
          fake.enqueue({ kind: "reply", text: "a slow but steady answer", delayMs: 60 });
          const started = Date.now();
          const response = await provider
            .streamMessage(request(), { timeoutMs: 150, maxRetries: 0 })
            .finalResponse();
          expect(Date.now() - started).toBeGreaterThan(150);
          expect(response.content.find((block) => block.type === "text")).toMatchObject({
            text: "a slow but steady answer",
          });
        },
        timeout,
      );
    });

    describe("abort", () => {
      it(
        "aborting a hanging request rejects with AbortedError (create and stream)",
        async () => {
          fake.enqueue({ kind: "hang" });
          const controller = new AbortController();
          const pending = provider.createMessage(request(), { signal: controller.signal });
          setTimeout(() => controller.abort(), 50);
          expect(await captureError(pending)).toBeInstanceOf(AbortedError);

          fake.enqueue({ kind: "hang" });
          const streamController = new AbortController();
          const stream = provider.streamMessage(request(), { signal: streamController.signal });
          setTimeout(() => streamController.abort(), 50);
          expect(await captureError(stream.finalResponse())).toBeInstanceOf(AbortedError);
        },
        timeout,
      );

      it.runIf(capabilities.abortClosesConnection === true)(
        "an abort cancels the request on the wire: the fake sees the connection close (create and stream)",
        async () => {
          fake.enqueue({ kind: "hang" });
          const controller = new AbortController();
          const pending = provider.createMessage(request(), { signal: controller.signal });
          await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
          expect(fake.requests[0]?.closedDuringHang).toBeUndefined();
          controller.abort();
          expect(await captureError(pending)).toBeInstanceOf(AbortedError);
          await vi.waitFor(() => expect(fake.requests[0]?.closedDuringHang).toBe(true));

          fake.enqueue({ kind: "hang" });
          const streamController = new AbortController();
          const stream = provider.streamMessage(request(), { signal: streamController.signal });
          const streamed = captureError(stream.finalResponse());
          await vi.waitFor(() => expect(fake.requests).toHaveLength(2));
          streamController.abort();
          expect(await streamed).toBeInstanceOf(AbortedError);
          await vi.waitFor(() => expect(fake.requests[1]?.closedDuringHang).toBe(true));
        },
        timeout,
      );

      it(
        "aborting after the first streamed event ends the stream with AbortedError",
        async () => {
          fake.enqueue({ kind: "reply", text: "a slow answer streamed in several frames", delayMs: 30 });
          const controller = new AbortController();
          const stream = provider.streamMessage(request(), { signal: controller.signal });
          const error = await captureError(
            (async () => {
              for await (const _event of stream) controller.abort();
            })(),
          );
          expect(error).toBeInstanceOf(AbortedError);
          await expect(stream.finalResponse()).rejects.toBeInstanceOf(AbortedError);
        },
        timeout,
      );

      it(
        "aborting during a retry wait rejects with AbortedError without another attempt",
        async () => {
          fake.enqueue({ kind: "error", error: "rate_limit", retryAfterSeconds: 30 });
          const controller = new AbortController();
          const pending = provider.createMessage(request(), { signal: controller.signal });
          setTimeout(() => controller.abort(), 100);
          expect(await captureError(pending)).toBeInstanceOf(AbortedError);
          expect(fake.requests).toHaveLength(1);
        },
        timeout,
      );

      it(
        "an already aborted signal sends nothing",
        async () => {
          const error = await captureError(
            provider.createMessage(request(), { signal: AbortSignal.abort() }),
          );
          expect(error).toBeInstanceOf(AbortedError);
          expect(fake.requests).toHaveLength(0);
        },
        timeout,
      );
    });

    describe.runIf(capabilities.unknownBlocks !== undefined)("unknown block types are preserved", () => {
      const unknown = capabilities.unknownBlocks;
      it(
        "a raw block in a reply comes back as UnknownBlock with the original (create and stream)",
        async () => {
          if (!unknown) return;
          fake.enqueue({ kind: "reply", text: "with extras", rawBlocks: [unknown.replyBlock] });
          const whole = await provider.createMessage(request());
          const expected: ContentBlock = { type: "unknown", original: unknown.original };
          expect(whole.content).toContainEqual(expected);
          fake.enqueue({ kind: "reply", text: "with extras", rawBlocks: [unknown.replyBlock] });
          const streamed: ModelResponse = await provider.streamMessage(request()).finalResponse();
          expect(streamed.content).toContainEqual(expected);
        },
        timeout,
      );

      it.runIf(unknown?.sentUnchanged === true)(
        "an UnknownBlock sent in a request goes out unchanged",
        async () => {
          if (!unknown) return;
          fake.enqueue({ kind: "reply", text: "ok" });
          await provider.createMessage(
            request({
              messages: [
                userText("first"),
                {
                  role: "assistant",
                  content: [
                    { type: "unknown", original: unknown.original },
                    { type: "text", text: "answer" },
                  ],
                },
                userText("second"),
              ],
            }),
          );
          expect(containsDeep(lastRequestBody(), unknown.original)).toBe(true);
        },
        timeout,
      );
    });
  });
}
