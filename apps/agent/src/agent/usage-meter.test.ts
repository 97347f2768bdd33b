import type { ModelRequest, Usage } from "@unforget/core";
import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageCostUsd } from "./usage-cost.ts";
import { createUsageMeter, modelUsageOf, totalCostUsd } from "./usage-meter.ts";

const MODEL = "claude-sonnet-4-6";

let fake: AnthropicFakeServer;
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(async () => {
  await fake.close();
});

/** A conversation long enough for the fake's server compaction (a `compact_*` edit with a low trigger) to run. */
function compactingRequest(): ModelRequest {
  const messages: ModelRequest["messages"] = [
    { role: "user", content: [{ type: "text", text: "Read them." }] },
  ];
  for (let index = 0; index < 3; index++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${index}`, name: "read", input: { path: `f${index}` } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${index}`, content: "x".repeat(400) }],
    });
  }
  return {
    model: MODEL,
    maxTokens: 256,
    messages,
    contextManagement: {
      edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: 50 } }],
    },
  };
}

/** The passes of a response summed: what the provider bills for it. */
function passesSummed(usage: Usage) {
  const passes = usage.iterations ?? [];
  const sum = (key: "inputTokens" | "outputTokens") => passes.reduce((total, pass) => total + pass[key], 0);
  return { inputTokens: sum("inputTokens"), outputTokens: sum("outputTokens") };
}

describe("the usage meter", () => {
  it("bills a server compaction's passes, which the top-level counts leave out (whole and streamed)", async () => {
    const meter = createUsageMeter();
    const provider = meter.wrap(
      createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url, initialRetryDelayMs: 1 }),
    );
    fake.enqueue({ kind: "reply", text: "continuing" });
    const whole = await provider.createMessage(compactingRequest());
    fake.enqueue({ kind: "reply", text: "continuing" });
    const stream = provider.streamMessage(compactingRequest());
    for await (const _event of stream) {
      // Read to the end: the meter records from the events as they pass.
    }
    const streamed = await stream.finalResponse();

    const billed = passesSummed(whole.usage);
    // The compaction pass is real work the top-level counts do not show.
    expect(whole.usage.iterations?.map((pass) => pass.type)).toEqual(["compaction", "message"]);
    expect(billed.inputTokens).toBeGreaterThan(whole.usage.inputTokens);
    expect(passesSummed(streamed.usage)).toEqual(billed);

    const total = meter.byModel().get(MODEL);
    expect(total).toMatchObject({
      inputTokens: 2 * billed.inputTokens,
      outputTokens: 2 * billed.outputTokens,
    });
    const usage = modelUsageOf(meter.byModel())[MODEL];
    expect(usage?.inputTokens).toBe(2 * billed.inputTokens);
    expect(totalCostUsd(meter.byModel())).toBeCloseTo(
      (2 * billed.inputTokens * 3 + 2 * billed.outputTokens * 15) / 1_000_000,
      6,
    );
  });

  it("prices cache writes of a one-hour life at twice the input price, of five minutes at 1.25 times", () => {
    const usage: Usage = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 1_000_000,
      cacheCreation: { ephemeral5mInputTokens: 600_000, ephemeral1hInputTokens: 400_000 },
    };
    // Sonnet's input is $3 per million: 0.6 × 3 × 1.25 + 0.4 × 3 × 2.
    expect(usageCostUsd(MODEL, usage)).toBeCloseTo(2.25 + 2.4, 6);
    expect(usageCostUsd(MODEL, { ...usage, cacheCreation: undefined })).toBeCloseTo(3.75, 6);
  });
});
