import { createUsage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { DEFAULT_MODEL_PRICING, getModelPricing, usageCost } from "./model-pricing.ts";

describe("getModelPricing", () => {
  it("finds a Claude model by any provider's id, the longest family first", () => {
    expect(getModelPricing("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toMatchObject({
      model: "claude-sonnet-4-5",
      known: true,
      input: 3,
      output: 15,
      cacheWrite5m: 3.75,
      cacheWrite1h: 6,
      cacheRead: 0.3,
    });
    // Opus 4.1 is the old $15 tier although "claude-opus-4" would also match.
    expect(getModelPricing("claude-opus-4-1-20250805").input).toBe(15);
    expect(getModelPricing("claude-opus-4-6@20260101").input).toBe(5);
    // Explicit cache rates win over the multipliers.
    expect(getModelPricing("claude-3-haiku-20240307").cacheRead).toBe(0.03);
  });

  it("prices an unknown model at the Sonnet tier and says so", () => {
    expect(getModelPricing("my-local-model")).toMatchObject({ known: false, input: 3, output: 15 });
  });

  it("lets a family or an exact id be overridden", () => {
    const overrides = {
      "claude-sonnet-4-5": { input: 6, output: 22.5 },
      "my-local-model": { input: 0, output: 0 },
    };
    expect(getModelPricing("claude-sonnet-4-5-20250929", overrides)).toMatchObject({
      input: 6,
      cacheRead: 0.6,
    });
    expect(getModelPricing("claude-sonnet-4-6", overrides).input).toBe(3);
    expect(getModelPricing("my-local-model", overrides)).toMatchObject({ known: true, input: 0 });
  });

  it("has a price for every Claude family in the table", () => {
    for (const [family, pricing] of Object.entries(DEFAULT_MODEL_PRICING)) {
      expect(family.startsWith("claude-")).toBe(true);
      expect(pricing.output).toBeGreaterThan(pricing.input);
    }
  });
});

describe("usageCost", () => {
  const sonnet = getModelPricing("claude-sonnet-4-5");

  it("prices uncached input, cache writes, cache reads and output each at its rate", () => {
    const usage = createUsage({
      inputTokens: 1_000_000,
      cacheCreationInputTokens: 2_000_000,
      cacheReadInputTokens: 10_000_000,
      outputTokens: 100_000,
    });
    const cost = usageCost(usage, sonnet);
    expect(cost.input).toBeCloseTo(3);
    expect(cost.cacheWrite).toBeCloseTo(7.5);
    expect(cost.cacheRead).toBeCloseTo(3);
    expect(cost.output).toBeCloseTo(1.5);
    expect(cost.total).toBeCloseTo(15);
  });

  it("prices one-hour cache writes at twice the input price", () => {
    const usage = {
      ...createUsage({ cacheCreationInputTokens: 1_000_000 }),
      cacheCreation: { ephemeral5mInputTokens: 400_000, ephemeral1hInputTokens: 600_000 },
    };
    expect(usageCost(usage, sonnet).cacheWrite).toBeCloseTo(0.4 * 3.75 + 0.6 * 6);
  });

  it("sums the sampling passes of a response that compacted on the server", () => {
    const usage = {
      ...createUsage({ inputTokens: 10, outputTokens: 10 }),
      iterations: [
        {
          type: "compaction",
          inputTokens: 1_000_000,
          outputTokens: 0,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
        },
        {
          type: "message",
          inputTokens: 10,
          outputTokens: 10,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
        },
      ],
    };
    expect(usageCost(usage, sonnet).input).toBeCloseTo(3 + 30 / 1_000_000);
  });
});
