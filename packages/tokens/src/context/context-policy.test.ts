import { describe, expect, it } from "vitest";
import { createContextPolicy } from "./context-policy.ts";
import { getAutoCompactThreshold, getTokensLeftBeforeCompaction } from "./context-thresholds.ts";

const noEnv = { env: {} };

describe("createContextPolicy", () => {
  const policy = createContextPolicy("claude-sonnet-4-5", noEnv);

  it("agrees with getAutoCompactThreshold and getTokensLeftBeforeCompaction", () => {
    for (const model of ["claude-sonnet-4-5", "claude-opus-4-7", "gemini-2.5-pro"]) {
      const state = createContextPolicy(model, noEnv).evaluate(50_000);
      expect(state.autoCompactThreshold).toBe(getAutoCompactThreshold(model, noEnv));
      expect(state.tokensLeftBeforeCompaction).toBe(getTokensLeftBeforeCompaction(50_000, model, noEnv));
    }
  });

  it("drives a UI gauge: ok, warning within 20,000 of the threshold, error past it, blocking near the window", () => {
    expect(policy.evaluate(100_000).gauge).toBe("ok");
    expect(policy.evaluate(150_000).gauge).toBe("warning");
    expect(policy.evaluate(166_999).gauge).toBe("warning");
    expect(policy.evaluate(167_000).gauge).toBe("error");
    expect(policy.evaluate(176_999).atBlockingLimit).toBe(false);
    expect(policy.evaluate(177_000).atBlockingLimit).toBe(true);
    const state = policy.evaluate(83_500);
    expect(state.tokensLeftBeforeCompaction).toBe(83_500);
    expect(state.percentLeftBeforeCompaction).toBe(50);
  });

  it("fires at a percentage of the effective window when asked, keeping the warning distance", () => {
    const ninety = createContextPolicy("claude-sonnet-4-5", { ...noEnv, autoCompactPercent: 90 });
    expect(ninety.evaluate(161_999).gauge).toBe("warning");
    expect(ninety.evaluate(162_000).gauge).toBe("error");
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
    expect(policy.evaluate(12_000)).toMatchObject({ gauge: "error", autoCompactThreshold: 12_000 });
    expect(policy.evaluate(12_999).atBlockingLimit).toBe(false);
    expect(policy.evaluate(13_000).atBlockingLimit).toBe(true);
  });
});
