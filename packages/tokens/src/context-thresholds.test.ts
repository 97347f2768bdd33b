import { ConfigurationError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import {
  createContextPolicy,
  getAutoCompactThreshold,
  getEffectiveContextWindow,
  getTokensLeftBeforeCompaction,
} from "./context-thresholds.ts";

const noEnv = { env: {} };

describe("thresholds", () => {
  it("reserves min(max output, 20,000) and keeps a 13,000-token buffer", () => {
    expect(getEffectiveContextWindow("claude-sonnet-4-5-20250929", noEnv)).toBe(180_000);
    expect(getAutoCompactThreshold("claude-sonnet-4-5-20250929", noEnv)).toBe(167_000);
    expect(getEffectiveContextWindow({ contextWindow: 200_000, maxOutputTokens: 8_192 }, noEnv)).toBe(
      191_808,
    );
    expect(getEffectiveContextWindow("us.anthropic.claude-opus-4-6-v1:0", noEnv)).toBe(980_000);
  });

  it("honours the absolute window and percentage overrides from the environment", () => {
    const env = { UNFORGET_AUTO_COMPACT_WINDOW: "50000" };
    expect(getEffectiveContextWindow("claude-sonnet-4-5", { env })).toBe(30_000);
    expect(getAutoCompactThreshold("claude-sonnet-4-5", { env })).toBe(17_000);
    expect(
      getAutoCompactThreshold("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_PERCENT: "50" } }),
    ).toBe(90_000);
    // Overrides only make compaction earlier.
    expect(
      getAutoCompactThreshold("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_PERCENT: "99" } }),
    ).toBe(167_000);
    expect(
      getAutoCompactThreshold("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_WINDOW: "10000000" } }),
    ).toBe(167_000);
  });

  it("rejects an invalid override with a ConfigurationError naming the variable", () => {
    expect(() =>
      getAutoCompactThreshold("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_PERCENT: "abc" } }),
    ).toThrow(ConfigurationError);
    expect(() =>
      getAutoCompactThreshold("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_PERCENT: "150" } }),
    ).toThrow(/UNFORGET_AUTO_COMPACT_PERCENT/);
  });

  it("reports tokens left before compaction", () => {
    expect(getTokensLeftBeforeCompaction(100_000, "claude-sonnet-4-5", noEnv)).toBe(67_000);
    expect(getTokensLeftBeforeCompaction(200_000, "claude-sonnet-4-5", noEnv)).toBe(0);
  });
});

describe("createContextPolicy", () => {
  const policy = createContextPolicy("claude-sonnet-4-5", noEnv);

  it("makes layers due at 60 / 80 % of the effective window and summarises at the auto-compact threshold", () => {
    expect(policy.evaluate(100_000).layersDue).toEqual([]);
    expect(policy.evaluate(108_000).layersDue).toEqual(["toolResultBudget"]);
    expect(policy.evaluate(144_000).layersDue).toEqual(["toolResultBudget", "microcompact"]);
    expect(policy.evaluate(166_999).layersDue).toEqual(["toolResultBudget", "microcompact"]);
    expect(policy.evaluate(167_000).layersDue).toEqual(["toolResultBudget", "microcompact", "autoCompact"]);
  });

  it("agrees with getAutoCompactThreshold and getTokensLeftBeforeCompaction", () => {
    for (const model of ["claude-sonnet-4-5", "claude-opus-4-7", "gemini-2.5-pro"]) {
      const state = createContextPolicy(model, noEnv).evaluate(50_000);
      expect(state.autoCompactThreshold).toBe(getAutoCompactThreshold(model, noEnv));
      expect(state.tokensLeftBeforeCompaction).toBe(getTokensLeftBeforeCompaction(50_000, model, noEnv));
    }
  });

  it("applies seed 000's 90 % level when asked for it", () => {
    const ninety = createContextPolicy("claude-sonnet-4-5", { ...noEnv, levels: { autoCompact: 0.9 } });
    expect(ninety.evaluate(162_000).layersDue).toContain("autoCompact");
    expect(ninety.evaluate(161_999).layersDue).not.toContain("autoCompact");
  });

  it("drives a UI gauge: ok, warning within 20,000 of the threshold, error past it, blocking near the window", () => {
    expect(policy.evaluate(100_000).gauge).toBe("ok");
    expect(policy.evaluate(150_000).gauge).toBe("warning");
    expect(policy.evaluate(170_000).gauge).toBe("error");
    expect(policy.evaluate(176_999).atBlockingLimit).toBe(false);
    expect(policy.evaluate(177_000).atBlockingLimit).toBe(true);
    const state = policy.evaluate(83_500);
    expect(state.tokensLeftBeforeCompaction).toBe(83_500);
    expect(state.percentLeftBeforeCompaction).toBe(50);
  });

  it("lets the auto-compact threshold win when it is lower than the 90 % level", () => {
    const small = createContextPolicy(
      { contextWindow: 40_000, maxOutputTokens: 8_000 },
      {
        ...noEnv,
        levels: { autoCompact: 0.9 },
      },
    );
    // effective 32,000; threshold 19,000 < 28,800
    expect(small.evaluate(19_000).layersDue).toContain("autoCompact");
    expect(() =>
      createContextPolicy("claude-sonnet-4-5", { ...noEnv, levels: { microcompact: 1.5 } }),
    ).toThrow(ConfigurationError);
  });
});
