import type { ModelRequest, RequestMessage } from "@unforget/core";
import { AbortedError, ConfigurationError, PromptTooLongError, ProviderRequestError } from "@unforget/core";
import type { BedrockFakeServer } from "@unforget/testing/fakes";
import { startBedrockFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BedrockProviderSettings } from "./index.ts";
import { createBedrockProvider } from "./index.ts";

const MODEL = "anthropic.claude-sonnet-4-6";
const PROFILE = `us.${MODEL}`;

function userText(text: string): RequestMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

describe("createBedrockProvider against the h2c fake", () => {
  let fake: BedrockFakeServer;
  const make = (overrides: BedrockProviderSettings = {}) =>
    createBedrockProvider({
      region: fake.region,
      baseURL: fake.url,
      credentials: fake.credentials,
      env: {},
      maxRetries: 2,
      initialRetryDelayMs: 1,
      ...overrides,
    });
  const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
    model: PROFILE,
    maxTokens: 512,
    messages: [userText("Weather in Paris?")],
    ...overrides,
  });
  const lastBody = () => fake.requests.at(-1)?.body as Record<string, unknown>;

  beforeAll(async () => {
    fake = await startBedrockFake();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.setCountTokensSupported(undefined);
  });

  describe("request translation (what reaches the wire)", () => {
    it("puts a cachePoint after every block, system block and tool that carries cache_control", async () => {
      await make().createMessage(
        request({
          system: [
            { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
            { type: "text", text: "Extra rules." },
          ],
          tools: [
            {
              name: "get_weather",
              description: "Weather",
              inputSchema: { type: "object", properties: { city: { type: "string" } } },
              cache_control: { type: "ephemeral", ttl: "1h" },
            },
          ],
          toolChoice: { type: "tool", name: "get_weather" },
          messages: [
            {
              role: "user",
              content: [{ type: "text", text: "Long document", cache_control: { type: "ephemeral" } }],
            },
          ],
        }),
      );
      const body = lastBody();
      expect(body.system).toEqual([
        { text: "You are terse." },
        { cachePoint: { type: "default" } },
        { text: "Extra rules." },
      ]);
      expect(body.messages).toEqual([
        { role: "user", content: [{ text: "Long document" }, { cachePoint: { type: "default" } }] },
      ]);
      expect(body.toolConfig).toEqual({
        tools: [
          {
            toolSpec: {
              name: "get_weather",
              description: "Weather",
              inputSchema: { json: { type: "object", properties: { city: { type: "string" } } } },
            },
          },
          { cachePoint: { type: "default", ttl: "1h" } },
        ],
        toolChoice: { tool: { name: "get_weather" } },
      });
      expect(body.inferenceConfig).toEqual({ maxTokens: 512 });
    });

    it("translates tool use, error results, reasoning, media and documents", async () => {
      const png = Buffer.from([137, 80, 78, 71]).toString("base64");
      const pdf = Buffer.from("%PDF-1.7").toString("base64");
      await make().createMessage(
        request({
          tools: [{ name: "read_file", inputSchema: { type: "object" } }],
          toolChoice: { type: "any" },
          thinking: { type: "enabled", budgetTokens: 2048 },
          temperature: 0.2,
          stopSequences: ["STOP"],
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "Look" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
                {
                  type: "document",
                  title: "Q3 report.pdf",
                  source: { type: "base64", media_type: "application/pdf", data: pdf },
                },
              ],
            },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "Need the file.", signature: "sig-1" },
                { type: "redacted_thinking", data: "AAEC" },
                { type: "tool_use", id: "tooluse_1", name: "read_file", input: { path: "a.txt" } },
              ],
            },
            {
              role: "user",
              content: [{ type: "tool_result", tool_use_id: "tooluse_1", content: "ENOENT", is_error: true }],
            },
          ],
        }),
      );
      const body = lastBody();
      const messages = body.messages as { role: string; content: Record<string, unknown>[] }[];
      expect(messages[0]?.content).toEqual([
        { text: "Look" },
        { image: { format: "png", source: { bytes: png } } },
        { document: { format: "pdf", name: "Q3 report pdf (1)", source: { bytes: pdf } } },
      ]);
      expect(messages[1]?.content).toEqual([
        { reasoningContent: { reasoningText: { text: "Need the file.", signature: "sig-1" } } },
        { reasoningContent: { redactedContent: "AAEC" } },
        { toolUse: { toolUseId: "tooluse_1", name: "read_file", input: { path: "a.txt" } } },
      ]);
      expect(messages[2]?.content).toEqual([
        { toolResult: { toolUseId: "tooluse_1", content: [{ text: "ENOENT" }], status: "error" } },
      ]);
      expect((body.toolConfig as Record<string, unknown>).toolChoice).toEqual({ any: {} });
      expect(body.additionalModelRequestFields).toEqual({
        thinking: { type: "enabled", budget_tokens: 2048 },
      });
      expect(body.inferenceConfig).toEqual({ maxTokens: 512, temperature: 0.2, stopSequences: ["STOP"] });
    });

    it("merges consecutive same-role turns and drops blank text, which Converse rejects", async () => {
      await make().createMessage(
        request({
          messages: [
            userText("first"),
            { role: "user", content: [{ type: "text", text: "" }] },
            userText("second"),
          ],
        }),
      );
      expect(lastBody().messages).toEqual([
        { role: "user", content: [{ text: "first" }, { text: "second" }] },
      ]);
    });

    it("declares the tools a history uses when the request has none (Converse requires a toolConfig)", async () => {
      await make().createMessage(
        request({
          messages: [
            userText("Weather?"),
            {
              role: "assistant",
              content: [{ type: "tool_use", id: "tooluse_9", name: "get_weather", input: { city: "Oslo" } }],
            },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "tooluse_9", content: "-3C" }] },
          ],
        }),
      );
      expect(lastBody().toolConfig).toEqual({
        tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: { type: "object" } } } }],
      });
    });

    it("passes Bedrock provider options through additionalModelRequestFields", async () => {
      await make().createMessage(
        request({
          providerOptions: {
            bedrock: { anthropicBeta: ["context-1m-2025-08-07"], additionalModelRequestFields: { top_k: 5 } },
            anthropic: { ignored: true },
          },
        }),
      );
      expect(lastBody().additionalModelRequestFields).toEqual({
        anthropic_beta: ["context-1m-2025-08-07"],
        top_k: 5,
      });
    });

    it("sends a Converse block kept as UnknownBlock back as its member; drops other providers' blocks", async () => {
      await make().createMessage(
        request({
          messages: [
            userText("first"),
            {
              role: "assistant",
              content: [
                {
                  type: "unknown",
                  original: { type: "citationsContent", citationsContent: { content: [{ text: "c" }] } },
                },
                {
                  type: "unknown",
                  original: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search" },
                },
                { type: "text", text: "answer" },
              ],
            },
            userText("second"),
          ],
        }),
      );
      const messages = lastBody().messages as { content: unknown[] }[];
      expect(messages[1]?.content).toEqual([
        { citationsContent: { content: [{ text: "c" }] } },
        { text: "answer" },
      ]);
    });
  });

  describe("responses", () => {
    it("leaves unsigned thinking (imported sessions) out of the request and keeps signed reasoning", async () => {
      await make().createMessage(
        request({
          messages: [
            userText("Read the file."),
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "imported, unsigned" },
                { type: "thinking", thinking: "signed", signature: "sig-1" },
                { type: "text", text: "Reading." },
              ],
            },
            userText("Go on."),
          ],
        }),
      );
      expect((lastBody().messages as unknown[])[1]).toEqual({
        role: "assistant",
        content: [
          { reasoningContent: { reasoningText: { text: "signed", signature: "sig-1" } } },
          { text: "Reading." },
        ],
      });
    });

    it("maps redacted reasoning to redacted_thinking (base64) and keeps the request id as response id", async () => {
      fake.enqueue({
        kind: "reply",
        text: "done",
        rawBlocks: [{ reasoningContent: { redactedContent: Buffer.from([1, 2, 3]).toString("base64") } }],
      });
      const response = await make().createMessage(request());
      expect(response.content).toEqual([
        { type: "text", text: "done" },
        { type: "redacted_thinking", data: Buffer.from([1, 2, 3]).toString("base64") },
      ]);
      expect(response.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.model).toBe(PROFILE);
    });

    it("streams redacted reasoning as one whole block and ends with the same content as Converse", async () => {
      const raw = { reasoningContent: { redactedContent: Buffer.from([9, 8]).toString("base64") } };
      fake.enqueue({ kind: "reply", text: "x", rawBlocks: [raw] });
      const whole = await make().createMessage(request());
      fake.enqueue({ kind: "reply", text: "x", rawBlocks: [raw] });
      const streamed = await make().streamMessage(request()).finalResponse();
      expect(streamed.content).toEqual(whole.content);
    });
  });

  describe("countTokens", () => {
    it("strips the cross-region prefix before counting natively", async () => {
      const provider = make();
      for (const prefix of ["us.", "eu.", "apac.", "global."]) {
        const counted = await provider.countTokens({
          model: `${prefix}${MODEL}`,
          messages: [userText("hi")],
        });
        expect(counted.method).toBe("native");
        expect(fake.requests.at(-1)?.path).toBe(`/model/${MODEL}/count-tokens`);
        expect(counted.inputTokens).toBe(fake.countTokens(fake.requests.at(-1)?.body));
      }
    });

    it("counts system and tools too (they are part of the CountTokens converse input)", async () => {
      await make().countTokens({
        model: PROFILE,
        system: "Be brief.",
        tools: [{ name: "get_weather", inputSchema: { type: "object" } }],
        messages: [userText("hi")],
      });
      expect(fake.requests.at(-1)?.body).toEqual({
        input: {
          converse: {
            messages: [{ role: "user", content: [{ text: "hi" }] }],
            system: [{ text: "Be brief." }],
            toolConfig: {
              tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: { type: "object" } } } }],
            },
          },
        },
      });
    });

    it("falls back to the heuristic where unsupported and stops asking for that model", async () => {
      fake.setCountTokensSupported(false);
      const provider = make();
      const first = await provider.countTokens({ model: PROFILE, messages: [userText("hello there")] });
      expect(first.method).toBe("heuristic");
      expect(first.fallbackReason).toContain("doesn't support counting tokens");
      expect(first.inputTokens).toBeGreaterThan(0);
      expect(provider.countTokensUnsupported.has(MODEL)).toBe(true);
      const second = await provider.countTokens({ model: PROFILE, messages: [userText("hello there")] });
      expect(second.method).toBe("heuristic");
      expect(fake.requests).toHaveLength(1);
    });

    it("uses the heuristic without a call when configured so", async () => {
      const counted = await make({ nativeTokenCounting: false }).countTokens({
        model: PROFILE,
        messages: [userText("x")],
      });
      expect(counted.method).toBe("heuristic");
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe("errors and retries", () => {
    it("retries ModelNotReadyException and succeeds", async () => {
      fake.enqueueBedrock(
        {
          kind: "bedrock-exception",
          name: "ModelNotReadyException",
          status: 429,
          message: "Model is warming up",
        },
        { kind: "reply", text: "ready" },
      );
      const response = await make().createMessage(request());
      expect(response.content).toEqual([{ type: "text", text: "ready" }]);
      expect(fake.requests).toHaveLength(2);
    });

    it("retries a throttling exception that arrives as the first stream frame", async () => {
      fake.enqueueBedrock(
        {
          kind: "bedrock-exception",
          name: "ThrottlingException",
          status: 429,
          message: "slow down",
          midStreamAfterEvents: 0,
        },
        { kind: "reply", text: "streamed" },
      );
      const response = await make().streamMessage(request()).finalResponse();
      expect(response.content).toEqual([{ type: "text", text: "streamed" }]);
      expect(fake.requests).toHaveLength(2);
    });

    it("does not retry an exception after events reached the caller", async () => {
      fake.enqueueBedrock({
        kind: "bedrock-exception",
        name: "ModelStreamErrorException",
        status: 424,
        message: "The model stream failed",
        midStreamAfterEvents: 2,
      });
      const error = await make()
        .streamMessage(request())
        .finalResponse()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderRequestError);
      expect((error as ProviderRequestError).providerErrorType).toBe("ModelStreamErrorException");
      expect(fake.requests).toHaveLength(1);
    });

    it("turns the generic mid-stream wording into PromptTooLongError without a gap", async () => {
      fake.enqueue({ kind: "error", error: "prompt_too_long_generic", midStreamAfterEvents: 1 });
      const error = await make()
        .streamMessage(request())
        .finalResponse()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PromptTooLongError);
      expect((error as PromptTooLongError).tokenGap).toBeUndefined();
      expect((error as PromptTooLongError).source).toBe("stream-error");
      expect((error as PromptTooLongError).message).toContain("Compact the conversation");
    });

    it("reads retry-after from the throttling response", async () => {
      fake.enqueue({ kind: "error", error: "rate_limit", retryAfterSeconds: 7 });
      const error = await make({ maxRetries: 0 })
        .createMessage(request())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderRequestError);
      expect((error as ProviderRequestError).retryAfterMs).toBe(7000);
      expect((error as ProviderRequestError).providerErrorType).toBe("ThrottlingException");
    });

    it("aborts a stream that is already delivering events", async () => {
      fake.enqueue({ kind: "reply", text: "a slow answer", delayMs: 40 });
      const controller = new AbortController();
      const stream = make().streamMessage(request(), { signal: controller.signal });
      const seen: string[] = [];
      const error = await (async () => {
        for await (const event of stream) {
          seen.push(event.type);
          if (seen.length === 2) controller.abort();
        }
      })().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AbortedError);
      expect(seen).toHaveLength(2);
    });
  });

  describe("settings", () => {
    it("reads the region lazily: creating never throws, the first call names the missing setting", async () => {
      // No config file to find a region in, whatever the machine has.
      const env: Record<string, string | undefined> = { AWS_CONFIG_FILE: "/nonexistent/aws-config" };
      const provider = createBedrockProvider({ baseURL: fake.url, credentials: fake.credentials, env });
      const error = await provider.createMessage(request()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).setting).toBe("AWS_REGION");
      expect(fake.requests).toHaveLength(0);
      env.AWS_REGION = "eu-west-1";
      await provider.createMessage(request());
      expect(fake.requests[0]?.headers.authorization).toContain("/eu-west-1/bedrock/aws4_request");
    });

    it("sends a Bedrock API key as a bearer token instead of SigV4", async () => {
      await make({ credentials: undefined, apiKey: "bedrock-api-key-1" }).createMessage(request());
      expect(fake.requests[0]?.headers.authorization).toBe("Bearer bedrock-api-key-1");
    });

    it("adds per-call headers", async () => {
      await make().createMessage(request(), { headers: { "x-unforget-session": "s-1" } });
      expect(fake.requests[0]?.headers["x-unforget-session"]).toBe("s-1");
    });

    it("resolves model limits through Bedrock ids and honours overrides", () => {
      const provider = make({ modelLimits: { "claude-sonnet-4-6": { contextWindow: 200_000 } } });
      expect(make().getModelLimits(PROFILE)).toMatchObject({
        model: "claude-sonnet-4-6",
        contextWindow: 1_000_000,
      });
      expect(provider.getModelLimits(PROFILE).contextWindow).toBe(200_000);
    });
  });
});

describe("settings it does not read", () => {
  it("refuses the AWS SDK's endpoint at creation rather than sending to the regional endpoint", () => {
    let error: unknown;
    try {
      createBedrockProvider({ region: "us-east-1", endpoint: "http://127.0.0.1:1", env: {} } as object);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toBe(
      'createBedrockProvider() has no setting "endpoint", so it would be ignored. Here the setting is "baseURL": "endpoint" is the AWS SDK\'s name for it.',
    );
    expect(() => createBedrockProvider({ maxAttempts: 1 } as object)).toThrow(
      'Here the setting is "maxRetries"',
    );
    expect(() => createBedrockProvider({ regoin: "eu-west-1" } as object)).toThrow('Did you mean "region"?');
  });
});
