import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import {
  AbortedError,
  ConfigurationError,
  type ModelRequest,
  modelRetirement,
  PromptTooLongError,
  ProviderRequestError,
  type ToolDefinition,
} from "@unforget/core";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { detectAnthropicEnvironment } from "./anthropic-environment.ts";
import { createAnthropicProvider } from "./anthropic-provider.ts";

const MODEL = "claude-sonnet-4-6";
const TOOL: ToolDefinition = {
  name: "read_file",
  description: "Read a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  cache_control: { type: "ephemeral" },
};

let fake: AnthropicFakeServer;
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.setContextLimit(undefined);
});

/** The parsed body of the n-th request the fake received. */
function sentBody(index: number): Record<string, unknown> {
  const body = fake.requests[index]?.body;
  if (typeof body !== "object" || body === null) throw new Error(`Request ${index} has no JSON body.`);
  return body as Record<string, unknown>;
}

const provider = () =>
  createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url, initialRetryDelayMs: 1 });

/** A conversation with `results` tool round trips, each result `size` characters long. */
function toolConversation(results: number, size: number): ModelRequest["messages"] {
  const messages: ModelRequest["messages"] = [
    { role: "user", content: [{ type: "text", text: "Read the files." }] },
  ];
  for (let index = 0; index < results; index++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "tool_use", id: `toolu_${index}`, name: "read_file", input: { path: `f${index}.txt` } },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${index}`, content: "x".repeat(size) }],
    });
  }
  return messages;
}

describe("wire translation", () => {
  it("sends system, tools, cache markers, tool choice, thinking and sampling settings in the API's shape", async () => {
    fake.enqueue({ kind: "reply", text: "ok" });
    await provider().createMessage({
      model: MODEL,
      maxTokens: 1024,
      system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      tools: [TOOL],
      toolChoice: { type: "auto", disableParallelToolUse: true },
      thinking: { type: "enabled", budgetTokens: 2048 },
      temperature: 1,
      stopSequences: ["STOP"],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
      ],
    });
    const sent = fake.requests[0];
    expect(sent?.operation).toBe("messages");
    expect(sent?.headers.authorization).toBe("Bearer sk-ant-test");
    expect(sent?.headers["anthropic-beta"]).toBeUndefined();
    expect(sent?.body).toEqual({
      model: MODEL,
      max_tokens: 1024,
      system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      tools: [
        {
          name: "read_file",
          description: "Read a file",
          input_schema: { type: "object", properties: { path: { type: "string" } } },
          cache_control: { type: "ephemeral" },
        },
      ],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2048 },
      temperature: 1,
      stop_sequences: ["STOP"],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
      ],
    });
  });

  it("counts tokens without the fields count_tokens rejects, and the count predicts the usage", async () => {
    const request: ModelRequest = {
      model: MODEL,
      maxTokens: 4096,
      temperature: 0.5,
      system: "You are terse.",
      tools: [TOOL],
      messages: toolConversation(2, 40),
    };
    const counted = await provider().countTokens(request);
    const countBody = fake.requests[0]?.body as Record<string, unknown>;
    expect(fake.requests[0]?.path).toBe("/v1/messages/count_tokens");
    expect(countBody.max_tokens).toBeUndefined();
    expect(countBody.temperature).toBeUndefined();
    fake.enqueue({ kind: "reply", text: "ok" });
    const response = await provider().createMessage(request);
    expect(counted).toEqual({ inputTokens: response.usage.inputTokens, method: "native" });
  });

  it("falls back to the heuristic when native counting is switched off, without a request", async () => {
    const offline = createAnthropicProvider({ baseURL: fake.url, nativeTokenCounting: false });
    const counted = await offline.countTokens({ model: MODEL, messages: toolConversation(1, 10) });
    expect(counted.method).toBe("heuristic");
    expect(counted.fallbackReason).toMatch(/disabled/);
    expect(offline.capabilities.nativeTokenCounting).toBe(false);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("context management", () => {
  it("passes clear_tool_uses edits through with the beta header and reports the applied edits", async () => {
    fake.enqueue({ kind: "reply", text: "done" });
    const request: ModelRequest = {
      model: MODEL,
      maxTokens: 256,
      messages: toolConversation(4, 400),
      contextManagement: {
        edits: [
          {
            type: "clear_tool_uses_20250919",
            trigger: { type: "input_tokens", value: 100 },
            keep: { type: "tool_uses", value: 1 },
            clearAtLeast: { type: "input_tokens", value: 10 },
            excludeTools: ["web_search"],
          },
        ],
      },
    };
    const response = await provider().createMessage(request);
    const sent = fake.requests[0];
    expect(sent?.headers["anthropic-beta"]).toContain("context-management-2025-06-27");
    expect((sentBody(0) as { context_management: unknown }).context_management).toEqual({
      edits: [
        {
          type: "clear_tool_uses_20250919",
          trigger: { type: "input_tokens", value: 100 },
          keep: { type: "tool_uses", value: 1 },
          clear_at_least: { type: "input_tokens", value: 10 },
          exclude_tools: ["web_search"],
        },
      ],
    });
    expect(response.appliedContextEdits).toHaveLength(1);
    const applied = response.appliedContextEdits?.[0];
    expect(applied?.type).toBe("clear_tool_uses_20250919");
    expect(applied?.clearedToolUses).toBe(3);
    expect(applied?.clearedInputTokens).toBeGreaterThan(250);
    // The usage reflects the context after the edit.
    expect(response.usage.inputTokens).toBe(
      fake.countTokens(sent?.body) - (applied?.clearedInputTokens as number),
    );

    fake.enqueue({ kind: "reply", text: "done" });
    const streamed = await provider().streamMessage(request).finalResponse();
    expect(streamed.appliedContextEdits).toEqual(response.appliedContextEdits);
    expect(streamed.usage).toEqual(response.usage);
  });

  it("leaves unsigned thinking (imported sessions) out of the request and keeps signed thinking", async () => {
    await provider().createMessage({
      model: MODEL,
      maxTokens: 64,
      messages: [
        { role: "user", content: "Read the file." },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "imported, unsigned" },
            { type: "thinking", thinking: "signed", signature: "sig1" },
            { type: "text", text: "Reading." },
          ],
        },
        { role: "assistant", content: [{ type: "thinking", thinking: "alone and unsigned", signature: "" }] },
        { role: "user", content: "Go on." },
      ],
    });
    expect(sentBody(0).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Read the file." }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "signed", signature: "sig1" },
          { type: "text", text: "Reading." },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Go on." }] },
    ]);
  });

  it("passes clear_thinking edits through and reports cleared thinking turns", async () => {
    fake.enqueue({ kind: "reply", text: "done" });
    const response = await provider().createMessage({
      model: MODEL,
      maxTokens: 256,
      thinking: { type: "enabled", budgetTokens: 1024 },
      messages: [
        { role: "user", content: [{ type: "text", text: "one" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "first thoughts", signature: "sig1" },
            { type: "text", text: "1" },
          ],
        },
        { role: "user", content: [{ type: "text", text: "two" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "second thoughts", signature: "sig2" },
            { type: "text", text: "2" },
          ],
        },
        { role: "user", content: [{ type: "text", text: "three" }] },
      ],
      contextManagement: {
        edits: [{ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } }],
      },
    });
    expect(fake.requests[0]?.headers["anthropic-beta"]).toContain("context-management-2025-06-27");
    expect(response.appliedContextEdits?.[0]).toMatchObject({
      type: "clear_thinking_20251015",
      clearedThinkingTurns: 1,
    });
  });

  it("passes compact edits with the compaction beta and returns the compaction block, streamed or not", async () => {
    const request: ModelRequest = {
      model: MODEL,
      maxTokens: 256,
      messages: toolConversation(3, 200),
      contextManagement: {
        edits: [
          {
            type: "compact_20260112",
            trigger: { type: "input_tokens", value: 50 },
            instructions: "Keep file names.",
          },
        ],
      },
    };
    fake.enqueue({ kind: "reply", text: "continuing" });
    const response = await provider().createMessage(request);
    expect(fake.requests[0]?.headers["anthropic-beta"]).toContain("compact-2026-01-12");
    expect((sentBody(0) as { context_management: unknown }).context_management).toEqual({
      edits: [
        {
          type: "compact_20260112",
          trigger: { type: "input_tokens", value: 50 },
          instructions: "Keep file names.",
        },
      ],
    });
    const first = response.content[0];
    expect(first?.type).toBe("unknown");
    expect(first?.type === "unknown" ? first.original : undefined).toEqual({
      type: "compaction",
      content: "Summary of 7 earlier messages (fake compaction).",
    });
    expect(response.content[1]).toEqual({ type: "text", text: "continuing" });

    fake.enqueue({ kind: "reply", text: "continuing" });
    const streamed = await provider().streamMessage(request).finalResponse();
    expect(streamed.content).toEqual(response.content);
    expect(streamed.usage).toEqual(response.usage);
  });

  it("maps a compaction pause to pause_turn and keeps the raw stop reason", async () => {
    fake.enqueue({ kind: "reply", text: "unused" });
    const response = await provider().createMessage({
      model: MODEL,
      maxTokens: 256,
      messages: toolConversation(2, 200),
      contextManagement: {
        edits: [
          {
            type: "compact_20260112",
            trigger: { type: "input_tokens", value: 50 },
            pauseAfterCompaction: true,
          },
        ],
      },
    });
    expect(
      (sentBody(0) as { context_management: { edits: unknown[] } }).context_management.edits[0],
    ).toMatchObject({
      pause_after_compaction: true,
    });
    expect(response.stopReason).toBe("pause_turn");
    expect(response.rawStopReason).toBe("compaction");
    expect(response.content).toHaveLength(1);
  });

  it("sends a compaction block received earlier back unchanged", async () => {
    fake.enqueue({ kind: "reply", text: "ok" });
    const original = { type: "compaction", content: "summary so far", encrypted_content: null };
    await provider().createMessage({
      model: MODEL,
      maxTokens: 256,
      messages: [
        { role: "assistant", content: [{ type: "unknown", original }] },
        { role: "user", content: [{ type: "text", text: "go on" }] },
      ],
    });
    expect((sentBody(0) as { messages: { content: unknown[] }[] }).messages[0]?.content[0]).toEqual(original);
  });

  it("adds providerOptions.anthropic betas and fields", async () => {
    fake.enqueue({ kind: "reply", text: "ok" });
    await provider().createMessage({
      model: MODEL,
      maxTokens: 256,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      providerOptions: {
        anthropic: { betas: ["context-1m-2025-08-07"], metadata: { user_id: "u1" } },
        bedrock: { x: 1 },
      },
    });
    expect(fake.requests[0]?.headers["anthropic-beta"]).toBe("context-1m-2025-08-07");
    const body = fake.requests[0]?.body as Record<string, unknown>;
    expect(body.metadata).toEqual({ user_id: "u1" });
    expect(body.betas).toBeUndefined();
    expect(body.x).toBeUndefined();
  });
});

describe("settings", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "ANTHROPIC_BASE_URL",
      "ANTHROPIC_CUSTOM_HEADERS",
    ]) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  it("reads the key and base URL from the environment on the first request, not at construction", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_AUTH_TOKEN;
    delete process.env.ANTHROPIC_BASE_URL;
    const lazy = createAnthropicProvider();
    process.env.ANTHROPIC_API_KEY = "sk-ant-from-env";
    process.env.ANTHROPIC_BASE_URL = fake.url;
    fake.enqueue({ kind: "reply", text: "ok" });
    await lazy.createMessage({
      model: MODEL,
      maxTokens: 16,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-ant-from-env");
  });

  it("says what failed when the server cannot be reached, and where requests went", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const baseURL = `http://127.0.0.1:${port}`;
    const error = await createAnthropicProvider({ baseURL, apiKey: "k", maxRetries: 0, env: {} })
      .createMessage({
        model: MODEL,
        maxTokens: 16,
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderRequestError);
    expect((error as Error).message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    // The call ends here (its retries are over): the message promises none.
    expect((error as Error).message).not.toMatch(/retried/);
    expect((await detectAnthropicEnvironment({ ANTHROPIC_BASE_URL: `${baseURL}/` })).endpoint).toBe(baseURL);
    expect((await detectAnthropicEnvironment({ ANTHROPIC_API_KEY: "k" })).endpoint).toBeUndefined();
  });

  it("throws a ConfigurationError naming ANTHROPIC_API_KEY when the real API has no credentials", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_AUTH_TOKEN;
    delete process.env.ANTHROPIC_BASE_URL;
    const error = await createAnthropicProvider()
      .createMessage({
        model: MODEL,
        maxTokens: 16,
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain("ANTHROPIC_API_KEY");
  });

  it("talks to an Anthropic-compatible server without a key, with custom headers", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_AUTH_TOKEN;
    const local = createAnthropicProvider({ baseURL: fake.url, headers: { "x-api-key": "local-key" } });
    fake.enqueue({ kind: "reply", text: "from llama" });
    const response = await local.createMessage({
      model: "qwen3-coder",
      maxTokens: 16,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    expect(response.content).toEqual([{ type: "text", text: "from llama" }]);
    expect(fake.requests[0]?.headers["x-api-key"]).toBe("local-key");
  });

  /** Sends one small request through `anthropic` and returns the headers the fake received. */
  const headersSentBy = async (anthropic: ReturnType<typeof createAnthropicProvider>) => {
    fake.enqueue({ kind: "reply", text: "ok" });
    await anthropic.createMessage({
      model: MODEL,
      maxTokens: 16,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    return fake.requests.at(-1)?.headers ?? {};
  };

  it("adds the headers of ANTHROPIC_CUSTOM_HEADERS, one `Name: value` per line; explicit headers win", async () => {
    process.env.ANTHROPIC_CUSTOM_HEADERS =
      "X-Gateway-Tenant: team-a\r\n\nnot a header\nX-Trace: a:b:c \nX-Api-Key: from-env\n: nameless";
    const gateway = createAnthropicProvider({
      apiKey: "sk-ant-test",
      baseURL: fake.url,
      headers: { "x-api-key": "explicit" },
    });
    const headers = await headersSentBy(gateway);
    expect(headers["x-gateway-tenant"]).toBe("team-a");
    expect(headers["x-trace"]).toBe("a:b:c");
    expect(headers["x-api-key"]).toBe("explicit");
    expect(Object.keys(headers).some((name) => name.includes(" "))).toBe(false);
  });

  it("reads ANTHROPIC_CUSTOM_HEADERS and the other fallbacks from the `env` setting when given", async () => {
    process.env.ANTHROPIC_CUSTOM_HEADERS = "X-From-Process: yes";
    const scoped = createAnthropicProvider({
      env: {
        ANTHROPIC_API_KEY: "sk-ant-scoped",
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_CUSTOM_HEADERS: "X-From-Env-Setting: yes",
      },
    });
    const headers = await headersSentBy(scoped);
    expect(headers.authorization).toBe("Bearer sk-ant-scoped");
    expect(headers["x-from-env-setting"]).toBe("yes");
    expect(headers["x-from-process"]).toBeUndefined();
  });
});

describe("model limits", () => {
  it("learns limits from GET /v1/models/{id} and falls back to the registry when that fails", async () => {
    fake.setModel({ id: "claude-test-9", maxInputTokens: 123_456, maxTokens: 7_890 });
    const anthropic = createAnthropicProvider({
      apiKey: "sk-ant-test",
      baseURL: fake.url,
      maxRetries: 0,
      modelLimits: { "claude-test-9": { contextWindow: 1000, maxOutputTokens: 100 } },
    });
    expect(anthropic.getModelLimits("claude-test-9").contextWindow).toBe(1000);
    const learned = await anthropic.fetchModelLimits("claude-test-9");
    expect(learned).toMatchObject({ contextWindow: 123_456, maxOutputTokens: 7_890 });
    expect(anthropic.getModelLimits("claude-test-9").contextWindow).toBe(123_456);
    expect(fake.requests.at(-1)?.path).toBe("/v1/models/claude-test-9");

    const unknown = await anthropic.fetchModelLimits("claude-sonnet-4-6");
    expect(unknown.contextWindow).toBe(1_000_000);
  });

  it("the models endpoint and overflow errors feed one place: an error's maximum bounds the fetched window", async () => {
    fake.setModel({ id: "claude-test-10", maxInputTokens: 500_000, maxTokens: 32_000 });
    const anthropic = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url, maxRetries: 0 });
    expect((await anthropic.fetchModelLimits("claude-test-10")).contextWindow).toBe(500_000);
    fake.setContextLimit(10);
    const error = await anthropic
      .createMessage({
        model: "claude-test-10",
        maxTokens: 16,
        messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PromptTooLongError);
    expect(anthropic.getModelLimits("claude-test-10")).toMatchObject({
      contextWindow: 10,
      maxOutputTokens: 32_000,
    });
    // A later fetch does not lift the window the server was seen to enforce.
    expect((await anthropic.fetchModelLimits("claude-test-10")).contextWindow).toBe(10);
    // Another provider instance has learned nothing.
    const other = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url });
    expect(other.getModelLimits("claude-test-10").contextWindow).not.toBe(10);
  });
});

describe("cancellation", () => {
  const hi: ModelRequest = {
    model: MODEL,
    maxTokens: 16,
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  };

  it("aborting after the first streamed event stops the stream with AbortedError", async () => {
    // No pacing: the frames may all be buffered already, and still none after the abort is delivered.
    fake.enqueue({ kind: "reply", text: "an answer that streams in several frames" });
    const controller = new AbortController();
    const stream = provider().streamMessage(hi, { signal: controller.signal });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) {
        seen.push(event.type);
        controller.abort();
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AbortedError);
    expect(seen).toEqual(["message_start"]);
  });
});

describe("settings it does not read", () => {
  it("refuses them at creation, naming the setting meant (the SDK's names included)", () => {
    const refused = (settings: object) => {
      try {
        createAnthropicProvider({ apiKey: "sk-ant-test", ...settings });
      } catch (error) {
        return error as ConfigurationError;
      }
      throw new Error("The provider took a setting it does not read.");
    };
    const baseUrl = refused({ baseUrl: fake.url });
    expect(baseUrl).toBeInstanceOf(ConfigurationError);
    expect(baseUrl.setting).toBe("baseUrl");
    expect(baseUrl.message).toBe(
      'createAnthropicProvider() has no setting "baseUrl", so it would be ignored. Here the setting is "baseURL": URL is in capitals, as in the Anthropic SDK.',
    );
    expect(refused({ maxAttempts: 3 }).message).toContain('Here the setting is "maxRetries"');
    expect(refused({ api_key: "sk" }).message).toContain('Did you mean "apiKey"?');
    expect(fake.requests).toHaveLength(0);
  });
});

describe("deprecated models", () => {
  it("turns the SDK's two-line warning on every request into one line per process, with the model to use", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const request: ModelRequest = {
        model: "claude-opus-4-5-20251101",
        maxTokens: 16,
        messages: [{ role: "user", content: "hi" }],
      };
      await provider().createMessage(request);
      await provider().streamMessage(request).finalResponse();
      await provider().createMessage(request);
      expect(warn.mock.calls).toEqual([
        [
          "unforget: the model claude-opus-4-5-20251101 is deprecated and reaches its end of life on 2027-01-22; use claude-opus-4-6 instead (https://docs.anthropic.com/en/docs/resources/model-deprecations).",
        ],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it("knows every model the installed SDK calls deprecated", () => {
    // Not an export of the SDK: read from its files, so that an SDK upgrade that adds one fails here.
    const root = dirname(createRequire(import.meta.url).resolve("@anthropic-ai/sdk"));
    const listed = readFileSync(join(root, "internal", "data", "deprecated-models.js"), "utf8");
    const models = [...listed.matchAll(/'([^']+)':\s*'/g)].map((match) => match[1] ?? "");
    expect(models.length).toBeGreaterThan(0);
    for (const model of models) expect(modelRetirement(model), model).toBeDefined();
  });
});
