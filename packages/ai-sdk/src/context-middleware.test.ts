import { createExtractiveSummarizer, type LayerReport } from "@unforget/compact";
import { PromptTooLongError } from "@unforget/core";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import * as ai7 from "ai";
import {
  APICallError,
  generateText,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  stepCountIs,
  tool,
} from "ai";
import { MockLanguageModelV4 } from "ai/test";
import * as ai6 from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { describe, expect, it } from "vitest";
import {
  createScriptedModel,
  isSummaryRequest,
  promptTokens,
  summaryReply,
} from "./__fixtures__/scripted-model.ts";
import { createAiSdkContext } from "./ai-sdk-context.ts";
import { createAiSdkSummarizer } from "./ai-sdk-summarizer.ts";
import { createContextMiddleware } from "./context-middleware.ts";

interface LoopApi {
  generateText(options: unknown): Promise<{ steps: unknown[] }>;
  streamText(options: unknown): { consumeStream(): Promise<void> };
  stepCountIs(count: number): unknown;
  tool(options: unknown): unknown;
  jsonSchema(schema: Record<string, unknown>): unknown;
  wrapLanguageModel(options: { model: unknown; middleware: unknown }): unknown;
}

const readTool = (api: LoopApi) => {
  let outputs = 0;
  return {
    Read: api.tool({
      description: "Reads a file",
      inputSchema: api.jsonSchema({ type: "object", properties: { path: { type: "string" } } }),
      execute: async () => syntheticToolOutput(++outputs, 600),
    }),
  };
};

describe.each([
  { name: "AI SDK 7", api: ai7, Mock: MockLanguageModelV4 },
  { name: "AI SDK 6", api: ai6, Mock: MockLanguageModelV3 },
])("createContextMiddleware on the $name", ({ api: rawApi, Mock }) => {
  const api = rawApi as unknown as LoopApi;

  it.each(["generateText", "streamText"])(
    "%s: keeps a 100-step loop under a 32K window through wrapLanguageModel, without prepareStep",
    async (mode) => {
      const { model, calls } = createScriptedModel(Mock as never, (_prompt, call) => ({
        tool: "Read",
        input: { path: `src/file${call}.ts` },
      }));
      const layers: LayerReport[] = [];
      const middleware = createContextMiddleware({
        model: "claude-sonnet-4-5",
        limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
        summarizer: createExtractiveSummarizer(),
        onEvent: (event) => {
          if (event.type === "layer") layers.push(event);
        },
      });
      const options = {
        model: api.wrapLanguageModel({ model, middleware }),
        system: "You read code.",
        tools: readTool(api),
        messages: [{ role: "user", content: "Request 0: read one hundred files." }],
        stopWhen: api.stepCountIs(100),
      };
      if (mode === "generateText") await api.generateText(options);
      else await api.streamText(options).consumeStream();
      expect(calls).toHaveLength(100);
      expect(Math.max(...calls.map((call) => call.tokens))).toBeLessThan(32_000);
      expect(layers.length).toBeGreaterThan(0);
      // The system prompt stays first, unchanged; the user's request is never lost.
      for (const call of calls) {
        expect(call.prompt[0]).toEqual({ role: "system", content: "You read code." });
        expect(JSON.stringify(call.prompt)).toContain("Request 0: read one hundred files.");
      }
      // The usage each response reported anchored the count (the status is the manager's, not an estimate alone).
      expect(middleware.lastResult?.tokens).toBeGreaterThan(0);
    },
  );
});

describe("createContextMiddleware: reactive compaction", () => {
  it("compacts and retries once when the provider refuses a prompt as too long", async () => {
    // The model's real limit (8K) is below what the window was declared as (200K): only the provider knows. (The
    // working-set policy keeps this loop under 12K on its own, so a limit of 20K would never be reached.) One
    // user turn of 50 steps is refused more often than a turn's recoveries: each response that comes back
    // gives the next refusal its own.
    let refusals = 0;
    const { model, calls } = createScriptedModel(MockLanguageModelV4 as never, (prompt, call) => {
      const tokens = promptTokens(prompt);
      if (tokens > 8_000) {
        refusals++;
        throw new APICallError({
          message: `prompt is too long: ${tokens} tokens > 8000 maximum`,
          url: "https://api.example.com/v1/messages",
          requestBodyValues: {},
          statusCode: 400,
          isRetryable: false,
        });
      }
      return { tool: "Read", input: { path: `src/file${call}.ts` } };
    });
    const layers: LayerReport[] = [];
    const middleware = createContextMiddleware({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      summarizer: createExtractiveSummarizer(),
      onEvent: (event) => {
        if (event.type === "layer") layers.push(event);
      },
    });
    const result = await (ai7 as unknown as LoopApi).generateText({
      model: ai7.wrapLanguageModel({ model: model as LanguageModel & object, middleware } as never),
      tools: readTool(ai7 as unknown as LoopApi),
      messages: [{ role: "user", content: "Request 0: read fifty files." }],
      stopWhen: stepCountIs(50),
    });
    expect(result.steps).toHaveLength(50);
    expect(refusals).toBeGreaterThan(0);
    // Each refusal drained collapse or summarised (the reactive path), then the call went again.
    expect(layers.filter((layer) => layer.trigger === "reactive").length).toBeGreaterThanOrEqual(refusals);
    // Each refusal was followed by a retry that fit, and every call that went through kept the request.
    for (const [index, call] of calls.entries()) {
      if (call.tokens > 8_000) expect(calls[index + 1]!.tokens).toBeLessThanOrEqual(8_000);
      else expect(JSON.stringify(call.prompt)).toContain("Request 0: read fifty files.");
    }
  });
});

describe("createAiSdkSummarizer", () => {
  it("has the AI SDK model write the nine sections, and reports its calls and tokens", async () => {
    const { model, calls } = createScriptedModel(MockLanguageModelV4 as never, (prompt) => ({
      text: summaryReply(prompt),
    }));
    const summarizer = createAiSdkSummarizer({ model: model as LanguageModel });
    const summary = await summarizer.summarize({
      messages: [
        {
          id: "u1",
          role: "user",
          timestamp: "",
          content: [{ type: "text", text: "Request 1: port the parser." }],
        },
        { id: "a1", role: "assistant", timestamp: "", content: [{ type: "text", text: "On it." }] },
      ],
      scope: "all",
      maxTokens: 2_000,
    });
    expect(summary.text).toContain("6. All User Messages:\n- Request 1: port the parser.");
    expect(summary.text).not.toContain("<analysis>");
    expect(summary.calls).toBe(1);
    expect(summary.inputTokens).toBe(calls[0]!.tokens);
    expect(summary.outputTokens).toBe(40);
  });

  it("turns the provider's too-long refusal into PromptTooLongError, so the caller truncates and retries", async () => {
    const { model } = createScriptedModel(MockLanguageModelV4 as never, () => {
      throw new APICallError({
        message: "prompt is too long: 250000 tokens > 200000 maximum",
        url: "https://api.example.com/v1/messages",
        requestBodyValues: {},
        statusCode: 400,
        isRetryable: false,
      });
    });
    const summarizer = createAiSdkSummarizer({ model: model as LanguageModel });
    const failure = summarizer.summarize({
      messages: [{ id: "u1", role: "user", timestamp: "", content: [{ type: "text", text: "hi" }] }],
      scope: "all",
      maxTokens: 1_000,
    });
    await expect(failure).rejects.toBeInstanceOf(PromptTooLongError);
    await expect(failure).rejects.toMatchObject({ actualTokens: 250_000, limitTokens: 200_000 });
  });

  it("writes the loop's summaries by default when the context is given a model object, sharing its system prompt", async () => {
    const { model, calls } = createScriptedModel(MockLanguageModelV4 as never, (prompt, call) =>
      isSummaryRequest(prompt) ? { text: summaryReply(prompt) } : { tool: "Task", input: { part: call } },
    );
    const layers: LayerReport[] = [];
    const context = createAiSdkContext({
      model: model as LanguageModel,
      limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
      onEvent: (event) => {
        if (event.type === "layer") layers.push(event);
      },
    });
    let outputs = 0;
    await generateText({
      model: model as LanguageModel,
      system: "You are a careful code reader.",
      tools: {
        Task: tool({
          description: "Runs a subtask",
          inputSchema: jsonSchema<{ part: number }>({
            type: "object",
            properties: { part: { type: "number" } },
          }),
          execute: async () => syntheticToolOutput(++outputs, 800),
        }),
      },
      messages: [{ role: "user", content: "Request 0: do sixty parts." }] satisfies ModelMessage[],
      stopWhen: stepCountIs(60),
      prepareStep: context.prepareStep,
    });
    const summaries = layers.filter((layer) => layer.layer === "summary");
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries[0]?.summarizer).toBe("model");
    const summaryCalls = calls.filter((call) => isSummaryRequest(call.prompt));
    expect(summaryCalls.length).toBeGreaterThan(0);
    // The summary call is a fork of the loop's request: same system prompt first, so it reuses the prompt cache.
    expect(summaryCalls[0]?.prompt[0]).toEqual({ role: "system", content: "You are a careful code reader." });
    const last = calls[calls.length - 1]!;
    expect(JSON.stringify(last.prompt)).toContain("Request 0: do sixty parts.");
  });
});

describe("the adapter's limits", () => {
  it("asks the summary for no more than the model's output limit", async () => {
    const { model, calls } = createScriptedModel(MockLanguageModelV4 as never, (prompt, call) =>
      isSummaryRequest(prompt) ? { text: summaryReply(prompt) } : { tool: "Task", input: { part: call } },
    );
    const context = createAiSdkContext({
      model: model as LanguageModel,
      limits: { contextWindow: 32_000, maxOutputTokens: 8_192 },
    });
    let outputs = 0;
    await generateText({
      model: model as LanguageModel,
      tools: {
        Task: tool({
          description: "Runs a subtask",
          inputSchema: jsonSchema<{ part: number }>({
            type: "object",
            properties: { part: { type: "number" } },
          }),
          execute: async () => syntheticToolOutput(++outputs, 800),
        }),
      },
      messages: [{ role: "user", content: "Request 0: do sixty parts." }] satisfies ModelMessage[],
      stopWhen: stepCountIs(60),
      prepareStep: context.prepareStep,
    });
    const summaries = calls.filter((call) => isSummaryRequest(call.prompt));
    expect(summaries.length).toBeGreaterThan(0);
    for (const call of summaries) expect(call.maxOutputTokens).toBeLessThanOrEqual(8_192);
  });

  it("learns the window a refusal states, in the middleware's recovery", async () => {
    let refused = false;
    const { model } = createScriptedModel(MockLanguageModelV4 as never, (prompt, call) => {
      if (!refused && promptTokens(prompt) > 2_000) {
        refused = true;
        throw new APICallError({
          message: `prompt is too long: ${promptTokens(prompt) * 10} tokens > 20000 maximum`,
          url: "https://api.example.com/v1/messages",
          requestBodyValues: {},
          statusCode: 400,
          isRetryable: false,
        });
      }
      return { tool: "Read", input: { path: `src/file${call}.ts` } };
    });
    const middleware = createContextMiddleware({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      summarizer: createExtractiveSummarizer(),
    });
    await (ai7 as unknown as LoopApi).generateText({
      model: ai7.wrapLanguageModel({ model: model as LanguageModel & object, middleware } as never),
      tools: readTool(ai7 as unknown as LoopApi),
      messages: [{ role: "user", content: "Request 0: read ten files." }],
      stopWhen: stepCountIs(10),
    });
    expect(refused).toBe(true);
    expect(middleware.status().contextWindow).toBe(20_000);
  });

  it("learns the window a refusal states from the summariser's calls too (prepareStep sees no other)", async () => {
    const { model } = createScriptedModel(MockLanguageModelV4 as never, (prompt, call) => {
      if (isSummaryRequest(prompt))
        throw new APICallError({
          message: `prompt is too long: ${promptTokens(prompt)} tokens > 24000 maximum`,
          url: "https://api.example.com/v1/messages",
          requestBodyValues: {},
          statusCode: 400,
          isRetryable: false,
        });
      return { tool: "Task", input: { part: call } };
    });
    const context = createAiSdkContext({
      model: model as LanguageModel,
      limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
    });
    let outputs = 0;
    await generateText({
      model: model as LanguageModel,
      tools: {
        Task: tool({
          description: "Runs a subtask",
          inputSchema: jsonSchema<{ part: number }>({
            type: "object",
            properties: { part: { type: "number" } },
          }),
          execute: async () => syntheticToolOutput(++outputs, 800),
        }),
      },
      messages: [{ role: "user", content: "Request 0: do forty parts." }] satisfies ModelMessage[],
      stopWhen: stepCountIs(40),
      prepareStep: context.prepareStep,
    });
    expect(context.status().contextWindow).toBe(24_000);
  });
});
