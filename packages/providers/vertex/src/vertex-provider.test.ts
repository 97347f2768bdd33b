import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  AbortedError,
  ConfigurationError,
  type ContentBlock,
  type ModelRequest,
  PromptTooLongError,
  ProviderRequestError,
  type RequestMessage,
} from "@unforget/core";
import { withScriptedClock } from "@unforget/testing/contract";
import { startVertexFake, type VertexFakeServer } from "@unforget/testing/fakes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createVertexProvider, type VertexProviderSettings } from "./index.ts";

let fake: VertexFakeServer;

beforeAll(async () => {
  fake = await startVertexFake();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.setContextLimit(undefined);
  fake.requests.length = 0;
});

const provider = (settings: VertexProviderSettings = {}) =>
  createVertexProvider({
    project: "unforget-test",
    location: "us-central1",
    baseURL: fake.url,
    accessToken: "fake-token",
    maxRetries: 0,
    initialRetryDelayMs: 1,
    env: {},
    ...settings,
  });

const user = (text: string): RequestMessage => ({ role: "user", content: [{ type: "text", text }] });
const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "gemini-2.5-pro",
  maxTokens: 512,
  messages: [user("Hello")],
  ...overrides,
});
const lastBody = () => fake.requests.at(-1)?.body as Record<string, unknown>;

const WEATHER = {
  name: "get_weather",
  description: "Weather for a city",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    additionalProperties: false,
    properties: {
      city: { type: "string", description: "City name" },
      units: { type: ["string", "null"], enum: ["C", "F"] },
      days: { type: "array", items: { type: "integer" } },
    },
    required: ["city"],
  },
};

describe("request translation", () => {
  it("sends system instruction, converted tool schemas, tool config and generation config", async () => {
    fake.enqueue({ kind: "reply", text: "ok" });
    await provider().createMessage(
      request({
        system: [
          { type: "text", text: "Be terse." },
          { type: "text", text: "Use metric units." },
        ],
        tools: [WEATHER],
        toolChoice: { type: "tool", name: "get_weather" },
        temperature: 0.2,
        topP: 0.9,
        stopSequences: ["END"],
        thinking: { type: "enabled", budgetTokens: 1024 },
      }),
    );
    const body = lastBody();
    expect(fake.requests.at(-1)?.path).toBe(
      "/v1/projects/unforget-test/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
    );
    expect(fake.requests.at(-1)?.headers.authorization).toBe("Bearer fake-token");
    expect(body.systemInstruction).toEqual({
      role: "system",
      parts: [{ text: "Be terse." }, { text: "Use metric units." }],
    });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "get_weather",
            description: "Weather for a city",
            parameters: {
              type: "OBJECT",
              required: ["city"],
              properties: {
                city: { type: "STRING", description: "City name" },
                units: { type: "STRING", nullable: true, enum: ["C", "F"] },
                days: { type: "ARRAY", items: { type: "INTEGER" } },
              },
            },
          },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] },
    });
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 512,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ["END"],
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
  });

  it("maps tool results back by call name in call order, merges same-role turns and sends media parts", async () => {
    fake.enqueue({
      kind: "reply",
      toolCalls: [
        { name: "get_weather", input: { city: "Paris" } },
        { name: "get_time", input: { city: "Rome" } },
      ],
    });
    const first = await provider().createMessage(request({ tools: [WEATHER] }));
    const [paris, rome] = first.content.filter((block) => block.type === "tool_use");
    expect(paris?.type === "tool_use" && rome?.type === "tool_use").toBe(true);
    if (paris?.type !== "tool_use" || rome?.type !== "tool_use") return;

    fake.enqueue({ kind: "reply", text: "done" });
    await provider().createMessage(
      request({
        messages: [
          user("Weather and time?"),
          { role: "assistant", content: first.content },
          {
            role: "user",
            // Results in the opposite order of the calls, one with an image attached.
            content: [
              {
                type: "tool_result",
                tool_use_id: rome.id,
                content: [
                  { type: "text", text: "14:05" },
                  {
                    type: "image",
                    source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
                  },
                ],
              },
              { type: "tool_result", tool_use_id: paris.id, content: "21C", is_error: false },
            ],
          },
          user("And a picture:"),
          { role: "user", content: [{ type: "image", source: { type: "url", url: "gs://bucket/cat.jpg" } }] },
        ],
      }),
    );
    expect(lastBody().contents).toEqual([
      { role: "user", parts: [{ text: "Weather and time?" }] },
      {
        role: "model",
        parts: [
          { functionCall: { name: "get_weather", args: { city: "Paris" } } },
          { functionCall: { name: "get_time", args: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { content: "21C" } } },
          { functionResponse: { name: "get_time", response: { content: "14:05" } } },
          { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
          { text: "And a picture:" },
          { fileData: { mimeType: "image/jpeg", fileUri: "gs://bucket/cat.jpg" } },
        ],
      },
    ]);
  });

  it("reports a failed tool as an error response", async () => {
    const messages: RequestMessage[] = [
      user("go"),
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "run", input: {} }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "exit 1", is_error: true }],
      },
    ];
    fake.enqueue({ kind: "reply", text: "sorry" });
    await provider().createMessage(request({ messages }));
    expect((lastBody().contents as unknown[])[2]).toEqual({
      role: "user",
      parts: [{ functionResponse: { name: "run", response: { error: "exit 1" } } }],
    });
  });
});

describe("tool call ids", () => {
  it("are deterministic per request, unique per call and differ between turns", async () => {
    const calls = [
      { name: "get_weather", input: { city: "Paris" } },
      { name: "get_weather", input: { city: "Paris" } },
    ];
    fake.enqueue({ kind: "reply", toolCalls: calls }, { kind: "reply", toolCalls: calls });
    const first = await provider().createMessage(request());
    const again = await provider().streamMessage(request()).finalResponse();
    fake.enqueue({ kind: "reply", toolCalls: calls });
    const otherTurn = await provider().createMessage(request({ messages: [user("Another question")] }));
    const ids = (content: ContentBlock[]) =>
      content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []));
    expect(ids(first.content)).toHaveLength(2);
    expect(new Set(ids(first.content)).size).toBe(2);
    expect(ids(again.content)).toEqual(ids(first.content));
    expect(ids(otherTurn.content).some((id) => ids(first.content).includes(id))).toBe(false);
  });
});

describe("thinking and thought signatures", () => {
  it("returns thought parts as thinking and round-trips the signature on the function call", async () => {
    fake.enqueue({
      kind: "reply",
      thinking: "Need the weather.",
      toolCalls: [{ name: "get_weather", input: { city: "Oslo" } }],
    });
    const response = await provider().createMessage(
      request({ thinking: { type: "enabled", budgetTokens: 256 } }),
    );
    const [thinking, toolUse, signature] = response.content;
    expect(thinking).toEqual({ type: "thinking", thinking: "Need the weather." });
    expect(toolUse?.type).toBe("tool_use");
    expect(signature?.type).toBe("thinking");
    const signed = signature?.type === "thinking" ? signature.signature : undefined;
    expect(signed).toBeTruthy();

    fake.enqueue({ kind: "reply", text: "Cold." });
    await provider().createMessage(
      request({
        messages: [
          user("Weather in Oslo?"),
          { role: "assistant", content: response.content },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: toolUse?.type === "tool_use" ? toolUse.id : "",
                content: "-3C",
              },
            ],
          },
        ],
      }),
    );
    expect((lastBody().contents as unknown[])[1]).toEqual({
      role: "model",
      parts: [
        { text: "Need the weather.", thought: true },
        { functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: signed },
      ],
    });
  });

  it("streams thinking deltas and assembles the same response as generateContent", async () => {
    const reply = { kind: "reply" as const, thinking: "Short thought here.", text: "The answer is four." };
    fake.enqueue(reply, reply);
    const whole = await provider().createMessage(request());
    const stream = provider().streamMessage(request());
    const kinds: string[] = [];
    for await (const event of stream) kinds.push(event.type);
    const streamed = await stream.finalResponse();
    expect(streamed).toEqual({ ...whole, id: streamed.id });
    expect(kinds.filter((kind) => kind === "thinking_delta").length).toBeGreaterThan(1);
    expect(kinds.filter((kind) => kind === "text_delta").length).toBeGreaterThan(1);
    expect(whole.content.at(-1)).toMatchObject({ type: "thinking", thinking: "" });
  });
});

describe("usage and stop reasons", () => {
  it("moves cached tokens out of the prompt count and counts thoughts as output", async () => {
    fake.enqueue({
      kind: "reply",
      thinking: "Thinking that costs tokens.",
      text: "Done.",
      usage: { inputTokens: 295, cacheReadInputTokens: 1800, outputTokens: 503 },
    });
    const response = await provider().createMessage(request());
    expect(response.usage).toEqual({
      inputTokens: 295,
      cacheReadInputTokens: 1800,
      cacheCreationInputTokens: 0,
      outputTokens: 503,
    });
  });

  it.each([
    ["max_tokens", "MAX_TOKENS", "max_tokens"],
    ["refusal", "SAFETY", "refusal"],
    ["end_turn", "STOP", "end_turn"],
  ] as const)("finish reason for %s", async (scripted, raw, expected) => {
    fake.enqueue(
      { kind: "reply", text: "x", stopReason: scripted },
      { kind: "reply", text: "x", stopReason: scripted },
    );
    const whole = await provider().createMessage(request());
    const streamed = await provider().streamMessage(request()).finalResponse();
    expect([whole.stopReason, whole.rawStopReason]).toEqual([expected, raw]);
    expect([streamed.stopReason, streamed.rawStopReason]).toEqual([expected, raw]);
  });
});

describe("countTokens", () => {
  it("sends system instruction and tools to the native endpoint and leaves scripted replies alone", async () => {
    fake.enqueue({ kind: "reply", text: "reserved for the next generateContent" });
    const counted = await provider().countTokens({
      model: "gemini-2.5-flash",
      system: "You are terse.",
      tools: [WEATHER],
      messages: [user("How many tokens is this?")],
    });
    const recorded = fake.requests.at(-1);
    expect(recorded?.operation).toBe("countTokens");
    expect(recorded?.path).toContain("/models/gemini-2.5-flash:countTokens");
    const body = recorded?.body as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["contents", "systemInstruction", "tools"]);
    expect(counted).toEqual({ inputTokens: fake.countTokens(body), method: "native" });
    const next = await provider().createMessage(request());
    expect(next.content).toEqual([{ type: "text", text: "reserved for the next generateContent" }]);
  });

  it("falls back to the heuristic when settings are missing, without throwing", async () => {
    const counted = await createVertexProvider({ env: {} }).countTokens({
      model: "gemini-2.5-pro",
      messages: [user("hi")],
    });
    expect(counted.method).toBe("heuristic");
    expect(counted.fallbackReason).toContain("GOOGLE_CLOUD_PROJECT");
  });
});

describe("prompt too long", () => {
  it("takes the limit from the message, not from the model table (regional caps)", async () => {
    fake.setContextLimit(40);
    const error = await provider()
      .createMessage(request({ messages: [user("x".repeat(400))] }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PromptTooLongError);
    const overflow = error as PromptTooLongError;
    expect(overflow.limitTokens).toBe(40);
    expect(overflow.actualTokens).toBe(fake.countTokens(lastBody()));
    expect(overflow.tokenGap).toBe(fake.countTokens(lastBody()) - 40);
    expect(overflow.source).toBe("error-response");
    expect(provider().getModelLimits("gemini-2.5-pro").contextWindow).toBe(1_048_576);
  });

  it("is typed in streams before the first event and mid-stream", async () => {
    fake.enqueue(
      { kind: "error", error: "prompt_too_long", actualTokens: 70_000, limitTokens: 65_536 },
      {
        kind: "error",
        error: "prompt_too_long",
        actualTokens: 70_000,
        limitTokens: 65_536,
        midStreamAfterEvents: 1,
      },
    );
    const before = await provider()
      .streamMessage(request())
      .finalResponse()
      .catch((caught: unknown) => caught);
    expect(before).toBeInstanceOf(PromptTooLongError);
    expect((before as PromptTooLongError).tokenGap).toBe(4_464);
    const during = await provider()
      .streamMessage(request())
      .finalResponse()
      .catch((caught: unknown) => caught);
    expect(during).toBeInstanceOf(PromptTooLongError);
    expect((during as PromptTooLongError).source).toBe("stream-error");
  });
});

describe("errors, retries and timeouts", () => {
  it("reads the wait from google.rpc.RetryInfo, since the SDK hides response headers", async () => {
    fake.enqueue({ kind: "error", error: "rate_limit", retryAfterSeconds: 30 });
    const error = await provider()
      .createMessage(request())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderRequestError);
    expect((error as ProviderRequestError).retryAfterMs).toBe(30_000);
    expect((error as ProviderRequestError).providerErrorType).toBe("RESOURCE_EXHAUSTED");
  });

  it("abandons an attempt after timeoutMs with a retryable error, and retries it", () =>
    withScriptedClock(async (clock) => {
      fake.enqueue({ kind: "hang" }, { kind: "reply", text: "second attempt" });
      const pending = provider({ timeoutMs: 100, maxRetries: 1 }).createMessage(request());
      await clock.until(() => fake.requests.length === 1, "the first attempt to reach the fake");
      // The timeout abandons the first attempt; the retry waits 1 ms, then the second attempt answers.
      await clock.advance(100);
      await clock.advance(1);
      const response = await pending;
      expect(response.content).toEqual([{ type: "text", text: "second attempt" }]);
      expect(fake.requests).toHaveLength(2);

      fake.enqueue({ kind: "hang" });
      const failed = provider({ timeoutMs: 50 })
        .createMessage(request())
        .catch((caught: unknown) => caught);
      await clock.until(() => fake.requests.length === 3, "the request to reach the fake");
      await clock.advance(50);
      const error = await failed;
      expect(error).toBeInstanceOf(ProviderRequestError);
      expect((error as ProviderRequestError).providerErrorType).toBe("timeout");
    }));

  it("aborts a stream between chunks", async () => {
    // No pacing: the chunks may all be buffered already, and still none after the abort is delivered.
    fake.enqueue({ kind: "reply", text: "a fairly long answer that arrives in several chunks" });
    const controller = new AbortController();
    const stream = provider().streamMessage(request(), { signal: controller.signal });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) {
        seen.push(event.type);
        if (event.type === "text_delta") controller.abort();
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AbortedError);
    expect(seen.filter((type) => type === "text_delta")).toHaveLength(1);
    expect(seen).not.toContain("message_stop");
  });

  it("rejects wrong credentials as a non-retryable 401 and sends custom headers", async () => {
    const strict = await startVertexFake({ requireAccessToken: "right-token" });
    try {
      const error = await createVertexProvider({
        project: "p",
        baseURL: strict.url,
        accessToken: async () => "wrong-token",
        maxRetries: 2,
        headers: { "x-unforget-test": "1" },
        env: {},
      })
        .createMessage(request())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderRequestError);
      expect((error as ProviderRequestError).status).toBe(401);
      expect((error as ProviderRequestError).retryable).toBe(false);
      expect(strict.requests).toHaveLength(1);
      expect(strict.requests[0]?.headers["x-unforget-test"]).toBe("1");
    } finally {
      await strict.close();
    }
  });
});

describe("settings", () => {
  it("are read on the first request, with environment fallbacks", async () => {
    const lazy = createVertexProvider({
      accessToken: "fake-token",
      env: {
        GOOGLE_CLOUD_PROJECT: "from-env",
        GOOGLE_CLOUD_LOCATION: "europe-west4",
        GOOGLE_VERTEX_API_ENDPOINT: `https://${fake.endpoint}/`,
      },
    });
    fake.enqueue({ kind: "reply", text: "ok" });
    await lazy.createMessage(request());
    expect(fake.requests.at(-1)?.path).toContain("/projects/from-env/locations/europe-west4/");
  });

  it("name the missing project and refuse an http:// endpoint", async () => {
    const missing = await createVertexProvider({ env: {} })
      .createMessage(request())
      .catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(ConfigurationError);
    expect((missing as ConfigurationError).setting).toBe("project");
    const plain = await createVertexProvider({ project: "p", baseURL: "http://127.0.0.1:1", env: {} })
      .createMessage(request())
      .catch((caught: unknown) => caught);
    expect(plain).toBeInstanceOf(ConfigurationError);
    expect((plain as ConfigurationError).setting).toBe("baseURL");
    expect(fake.requests).toHaveLength(0);
  });

  it("applies model limit overrides", () => {
    const limited = provider({ modelLimits: { "gemini-2.5-pro": { contextWindow: 131_072 } } });
    expect(limited.getModelLimits("publishers/google/models/gemini-2.5-pro")).toMatchObject({
      contextWindow: 131_072,
      limitKind: "input",
    });
  });
});

describe("package boundary", () => {
  it("the emitted public declarations import nothing but @unforget packages (run after the build)", () => {
    const dist = join(import.meta.dirname, "..", "dist");
    const pending = ["index.d.ts"];
    const seen = new Set<string>();
    const external = new Set<string>();
    while (pending.length > 0) {
      const file = pending.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      const text = readFileSync(join(dist, file), "utf8");
      for (const match of text.matchAll(/(?:from\s+|import\()["']([^"']+)["']/g)) {
        const specifier = match[1] as string;
        if (specifier.startsWith("."))
          pending.push(specifier.replace(/^\.\//, "").replace(/\.(?:js|ts)$/, ".d.ts"));
        else external.add(specifier);
      }
    }
    expect(seen.has("vertex-provider.d.ts")).toBe(true);
    expect([...external].sort()).toEqual(["@unforget/core", "@unforget/provider-runtime"]);
  });
});

describe("settings it does not read", () => {
  it("refuses them at creation, naming the setting meant", () => {
    expect(() => createVertexProvider({ project: "p", apiEndpoint: fake.url } as object)).toThrow(
      'createVertexProvider() has no setting "apiEndpoint", so it would be ignored. Here the setting is "baseURL": "apiEndpoint" is the Vertex AI SDK\'s name for it.',
    );
    expect(() => createVertexProvider({ projectId: "p" } as object)).toThrow(ConfigurationError);
    expect(() => createVertexProvider({ projectId: "p" } as object)).toThrow('Did you mean "project"?');
  });
});
