import { ConfigurationError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createContextPolicy } from "./context-policy.ts";
import { getAutoCompactThreshold, getTokensLeftBeforeCompaction } from "./context-thresholds.ts";

const noEnv = { env: {} };

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
    // effective 35,000; threshold 30,000 < 31,500
    expect(small.evaluate(29_999).layersDue).not.toContain("autoCompact");
    expect(small.evaluate(30_000).layersDue).toContain("autoCompact");
    expect(() =>
      createContextPolicy("claude-sonnet-4-5", { ...noEnv, levels: { microcompact: 1.5 } }),
    ).toThrow(ConfigurationError);
  });
});

describe("createContextPolicy at 16K", () => {
  it("reports the warning level and the blocking limit it uses", () => {
    const policy = createContextPolicy({ contextWindow: 16_000, maxOutputTokens: 4_000 }, noEnv);
    expect(policy.evaluate(10_399)).toMatchObject({
      gauge: "ok",
      warningThreshold: 10_400,
      blockingLimit: 13_000,
    });
    expect(policy.evaluate(10_400).gauge).toBe("warning");
    expect(policy.evaluate(12_000)).toMatchObject({
      gauge: "error",
      layersDue: ["toolResultBudget", "microcompact", "autoCompact"],
    });
    expect(policy.evaluate(12_999).atBlockingLimit).toBe(false);
    expect(policy.evaluate(13_000).atBlockingLimit).toBe(true);
  });

  it("keeps the warning distance below a lower levels.autoCompact", () => {
    const policy = createContextPolicy(
      { contextWindow: 16_000, maxOutputTokens: 4_000 },
      { ...noEnv, levels: { autoCompact: 0.5 } },
    );
    expect(policy.evaluate(0)).toMatchObject({ autoCompactThreshold: 7_000, warningThreshold: 5_400 });
  });
});
