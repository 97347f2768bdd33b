import { createAnthropic } from "@ai-sdk/anthropic";
import { createExtractiveSummarizer, type LayerReport } from "@unforget/compact";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { createAiSdkContext } from "./ai-sdk-context.ts";
import { createContextMiddleware } from "./context-middleware.ts";

/**
 * A real provider package, `@ai-sdk/anthropic`, against the Anthropic fake (which speaks the Messages API, counts
 * tokens deterministically and refuses an over-limit request with Anthropic's own prompt-too-long error).
 */

interface WireBlock {
  type: string;
  text?: string;
  cache_control?: unknown;
}
interface WireBody {
  messages: { role: string; content: string | WireBlock[] }[];
}

const request = "Request 0: read forty files and note every parse call.";

function readTool() {
  let outputs = 0;
  return tool({
    description: "Reads a file",
    inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
    execute: async () => syntheticToolOutput(++outputs, 700),
  });
}

describe("with @ai-sdk/anthropic", () => {
  it("sends the ladder's projection with the user's cache control intact on the wire", async () => {
    const fake = await startAnthropicFake();
    try {
      for (let call = 0; call < 40; call++)
        fake.enqueue({ kind: "reply", toolCalls: [{ name: "read", input: { path: `src/f${call}.ts` } }] });
      fake.enqueue({ kind: "reply", text: "Done." });
      const anthropic = createAnthropic({ baseURL: `${fake.url}/v1`, apiKey: "test-key" });
      const layers: LayerReport[] = [];
      const context = createAiSdkContext({
        model: "claude-sonnet-4-5",
        limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
        summarizer: createExtractiveSummarizer(),
        onEvent: (event) => {
          if (event.type === "layer") layers.push(event);
        },
      });
      const result = await generateText({
        model: anthropic("claude-sonnet-4-5"),
        tools: { read: readTool() },
        messages: [
          {
            role: "user",
            content: [
              {
                type: "text",
                text: request,
                providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
              },
            ],
          },
        ],
        stopWhen: stepCountIs(41),
        prepareStep: context.prepareStep,
      });
      expect(result.text).toBe("Done.");
      expect(layers.length).toBeGreaterThan(0);
      const bodies = fake.requests
        .filter((seen) => seen.operation === "messages")
        .map((seen) => seen.body as WireBody);
      expect(bodies).toHaveLength(41);
      for (const body of bodies) {
        const first = body.messages[0]!;
        // Every request still opens with the user's request, and its cache breakpoint reached the provider.
        expect(JSON.stringify(body.messages)).toContain("Request 0");
        if (Array.isArray(first.content) && first.content[0]?.text === request)
          expect(first.content[0].cache_control).toEqual({ type: "ephemeral" });
      }
      expect(
        bodies.some((body) => JSON.stringify(body).includes('"cache_control":{"type":"ephemeral"}')),
      ).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it("recovers when Anthropic refuses the prompt as too long, through the middleware, and the loop goes on", async () => {
    // The window was declared at 200K; the model behind the fake takes 8K: only its error says so. (The
    // working-set policy keeps this loop under 12K on its own.)
    const fake = await startAnthropicFake({ contextLimit: 8_000 });
    try {
      for (let call = 0; call < 30; call++)
        fake.enqueue({ kind: "reply", toolCalls: [{ name: "read", input: { path: `src/f${call}.ts` } }] });
      fake.enqueue({ kind: "reply", text: "Done." });
      const anthropic = createAnthropic({ baseURL: `${fake.url}/v1`, apiKey: "test-key" });
      const layers: LayerReport[] = [];
      const middleware = createContextMiddleware({
        model: "claude-sonnet-4-5",
        limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
        summarizer: createExtractiveSummarizer(),
        onEvent: (event) => {
          if (event.type === "layer") layers.push(event);
        },
      });
      const result = await generateText({
        model: wrapLanguageModel({ model: anthropic("claude-sonnet-4-5"), middleware }),
        tools: { read: readTool() },
        messages: [{ role: "user", content: request }],
        stopWhen: stepCountIs(31),
        maxRetries: 0,
      });
      expect(result.text).toBe("Done.");
      expect(layers.some((layer) => layer.trigger === "reactive")).toBe(true);
      // Each refusal used up one scripted reply of the fake; every other request became a step.
      const sent = fake.requests.filter((seen) => seen.operation === "messages").length;
      const refused = sent - result.steps.length;
      expect(refused).toBeGreaterThan(0);
      expect(sent).toBe(31);
    } finally {
      await fake.close();
    }
  });
});
