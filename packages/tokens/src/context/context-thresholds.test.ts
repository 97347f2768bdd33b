import { ConfigurationError } from "@unforget/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createContextPolicy } from "./context-policy.ts";
import {
  getAutoCompactThreshold,
  getContextThresholds,
  getEffectiveContextWindow,
  getTokensLeftBeforeCompaction,
  MINIMUM_CONTEXT_WINDOW_TOKENS,
} from "./context-thresholds.ts";
import { ContextWindowTooSmallError } from "./context-window-too-small-error.ts";

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
    // A 50K window keeps an eighth for the summary and an eighth of headroom (it used to keep 34 %).
    const env = { UNFORGET_AUTO_COMPACT_WINDOW: "50000" };
    expect(getEffectiveContextWindow("claude-sonnet-4-5", { env })).toBe(43_750);
    expect(getAutoCompactThreshold("claude-sonnet-4-5", { env })).toBe(37_500);
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

describe("small windows", () => {
  const sixteen = { contextWindow: 16_000, maxOutputTokens: 4_000 };

  it("keeps a useful share of a 16K window before compaction", () => {
    const state = createContextPolicy(sixteen, noEnv).evaluate(100);
    expect(state.gauge).toBe("ok");
    expect(state.gauge).toBe("ok");
    expect(state.atBlockingLimit).toBe(false);
    expect(state.autoCompactThreshold).toBeGreaterThanOrEqual(9_600);
    expect(state.autoCompactThreshold).toBeLessThanOrEqual(12_000);
  });

  it("gives strictly ordered levels for every window from the minimum up", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MINIMUM_CONTEXT_WINDOW_TOKENS, max: 3_000_000 }),
        fc.integer({ min: 1, max: 200_000 }),
        (contextWindow, maxOutputTokens) => {
          const t = getContextThresholds({ contextWindow, maxOutputTokens }, noEnv);
          expect(0).toBeLessThan(t.warningThreshold);
          expect(t.warningThreshold).toBeLessThan(t.autoCompactThreshold);
          expect(t.autoCompactThreshold).toBeLessThan(t.blockingLimit);
          expect(t.blockingLimit).toBeLessThan(t.effectiveWindow);
          expect(t.effectiveWindow).toBeLessThan(t.contextWindow);
          // After a compaction the summary takes at most half of the room before the next one.
          expect(t.autoCompactThreshold).toBeGreaterThanOrEqual(2 * t.summaryOutputReserve);
          for (const value of Object.values(t)) expect(Number.isSafeInteger(value)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("does not drop by a token where the window crosses a multiple of eight (found by the property below)", () => {
    const at = (contextWindow: number) =>
      getAutoCompactThreshold({ contextWindow, maxOutputTokens: 6_316 }, noEnv);
    expect(at(50_528)).toBeGreaterThanOrEqual(at(50_527));
  });

  it("never lowers the threshold when the window grows", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MINIMUM_CONTEXT_WINDOW_TOKENS, max: 2_000_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 200_000 }),
        (contextWindow, extra, maxOutputTokens) => {
          const small = getAutoCompactThreshold({ contextWindow, maxOutputTokens }, noEnv);
          const large = getAutoCompactThreshold(
            { contextWindow: contextWindow + extra, maxOutputTokens },
            noEnv,
          );
          expect(large).toBeGreaterThanOrEqual(small);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("keeps every number of 200K windows and above exactly as before", () => {
    for (const contextWindow of [200_000, 400_000, 1_000_000, 2_097_152]) {
      for (const maxOutputTokens of [4_096, 8_192, 20_000, 64_000, 128_000]) {
        const reserve = Math.min(maxOutputTokens, 20_000);
        const t = getContextThresholds({ contextWindow, maxOutputTokens }, noEnv);
        expect(t).toEqual({
          contextWindow,
          summaryOutputReserve: reserve,
          effectiveWindow: contextWindow - reserve,
          autoCompactBuffer: 13_000,
          autoCompactThreshold: contextWindow - reserve - 13_000,
          warningThreshold: contextWindow - reserve - 33_000,
          blockingLimit: contextWindow - reserve - 3_000,
        });
      }
    }
  });

  it("scales the reserves with the window below 200K", () => {
    const at = (contextWindow: number, maxOutputTokens = 64_000) =>
      getContextThresholds({ contextWindow, maxOutputTokens }, noEnv);
    expect(at(16_000, 4_000)).toEqual({
      contextWindow: 16_000,
      summaryOutputReserve: 2_000,
      effectiveWindow: 14_000,
      autoCompactBuffer: 2_000,
      autoCompactThreshold: 12_000,
      warningThreshold: 10_400,
      blockingLimit: 13_000,
    });
    expect(at(32_768).autoCompactThreshold).toBe(24_576);
    expect(at(8_192).autoCompactThreshold).toBe(4_192);
    // The unknown-model default (128K, 8,192 output) keeps its threshold.
    expect(getAutoCompactThreshold("some-local-model", noEnv)).toBe(106_808);
  });

  it("refuses a window too small to compact in with a typed error naming its source", () => {
    const tiny = { contextWindow: 4_096, maxOutputTokens: 1_024 };
    expect(() => createContextPolicy(tiny, noEnv)).toThrow(ContextWindowTooSmallError);
    try {
      getAutoCompactThreshold(tiny, noEnv);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error).toMatchObject({
        code: "configuration",
        setting: "contextWindow",
        contextWindow: 4_096,
        minimumContextWindow: MINIMUM_CONTEXT_WINDOW_TOKENS,
      });
      expect((error as Error).message).toMatch(/4,096.*8,000/);
    }
    const fromEnv = () =>
      getEffectiveContextWindow("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_WINDOW: "5000" } });
    expect(fromEnv).toThrow(ContextWindowTooSmallError);
    expect(fromEnv).toThrow(/UNFORGET_AUTO_COMPACT_WINDOW is 5000/);
    const fromOption = () =>
      getEffectiveContextWindow("claude-sonnet-4-5", { ...noEnv, windowOverride: 5_000 });
    expect(fromOption).toThrow(/windowOverride is 5000/);
    expect(fromOption).not.toThrow(/UNFORGET/);
    expect(getEffectiveContextWindow({ contextWindow: 8_000, maxOutputTokens: 8_000 }, noEnv)).toBe(6_000);
  });

  it("rejects limits that are not positive numbers, naming the field", () => {
    expect(() => getContextThresholds({ contextWindow: 16_000, maxOutputTokens: Number.NaN }, noEnv)).toThrow(
      /maxOutputTokens is NaN/,
    );
    expect(() =>
      getContextThresholds({ contextWindow: undefined, maxOutputTokens: 100 } as never, noEnv),
    ).toThrow(ConfigurationError);
  });
});

describe("autoCompactThreshold (per-model setting)", () => {
  it("sets the threshold in tokens or as a percentage of the effective window, earlier or later", () => {
    expect(
      getAutoCompactThreshold("claude-sonnet-4-5", { ...noEnv, autoCompactThreshold: { tokens: 100_000 } }),
    ).toBe(100_000);
    expect(
      getAutoCompactThreshold("claude-sonnet-4-5", { ...noEnv, autoCompactThreshold: { percent: 50 } }),
    ).toBe(90_000);
    // Later than the default is allowed up to the blocking limit (177,000 for a 200K window).
    const late = createContextPolicy("claude-sonnet-4-5", {
      ...noEnv,
      autoCompactThreshold: { tokens: 176_999 },
    });
    expect(late.evaluate(170_000).gauge).not.toBe("error");
    expect(late.evaluate(176_999).gauge).toBe("error");
    expect(
      getTokensLeftBeforeCompaction(100_000, "claude-sonnet-4-5", {
        ...noEnv,
        autoCompactThreshold: { percent: 60 },
      }),
    ).toBe(8_000);
  });

  it("still lets the environment make compaction earlier", () => {
    expect(
      getAutoCompactThreshold("claude-sonnet-4-5", {
        env: { UNFORGET_AUTO_COMPACT_PERCENT: "50" },
        autoCompactThreshold: { tokens: 170_000 },
      }),
    ).toBe(90_000);
  });

  it("rejects a threshold at or past the blocking limit, or not a number, naming the option", () => {
    for (const setting of [
      { tokens: 177_000 },
      { percent: 100 },
      { tokens: 0 },
      { percent: Number.NaN },
      {},
    ]) {
      try {
        getAutoCompactThreshold("claude-sonnet-4-5", { ...noEnv, autoCompactThreshold: setting as never });
        expect.unreachable(JSON.stringify(setting));
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError);
        expect((error as ConfigurationError).setting).toBe("autoCompactThreshold");
        expect((error as Error).message).toMatch(/^autoCompactThreshold/);
      }
    }
  });
});

describe("option errors", () => {
  it("names the option when the option was the source", () => {
    expect(() => getAutoCompactThreshold("claude-sonnet-4-5", { ...noEnv, autoCompactPercent: -5 })).toThrow(
      /^autoCompactPercent is -5,/,
    );
    expect(() =>
      getAutoCompactThreshold("claude-sonnet-4-5", {
        env: { UNFORGET_AUTO_COMPACT_PERCENT: "50" },
        autoCompactPercent: -5,
      }),
    ).not.toThrow(/UNFORGET_AUTO_COMPACT_PERCENT/);
    expect(() =>
      getEffectiveContextWindow("claude-sonnet-4-5", { ...noEnv, windowOverride: Number.NaN }),
    ).toThrow(/^windowOverride is NaN,/);
    expect(() =>
      getEffectiveContextWindow("claude-sonnet-4-5", { ...noEnv, windowOverride: "50000" as never }),
    ).toThrow(/^windowOverride is "50000"/);
    try {
      getAutoCompactThreshold("claude-sonnet-4-5", { ...noEnv, autoCompactPercent: 500 });
    } catch (error) {
      expect((error as ConfigurationError).setting).toBe("autoCompactPercent");
    }
  });

  it("names the environment variable when the environment was the source", () => {
    expect(() =>
      getAutoCompactThreshold("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_PERCENT: "-5" } }),
    ).toThrow(/^UNFORGET_AUTO_COMPACT_PERCENT is "-5",/);
    expect(() =>
      getEffectiveContextWindow("claude-sonnet-4-5", { env: { UNFORGET_AUTO_COMPACT_WINDOW: "lots" } }),
    ).toThrow(/^UNFORGET_AUTO_COMPACT_WINDOW is "lots",/);
  });
});
