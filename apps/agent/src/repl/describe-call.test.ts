import type { ContextEvent, LayerReport } from "@unforget/compact";
import { describe, expect, it } from "vitest";
import { describeContextEvent } from "./describe-call.ts";

const summary = (extra: Partial<LayerReport>): ContextEvent => ({
  type: "layer",
  layer: "summary",
  trigger: "auto",
  tokensBefore: 40_000,
  tokensAfter: 27_000,
  tokensFreed: 13_000,
  durationMs: 5,
  stats: {},
  reason: "threshold",
  ...extra,
});

describe("the screen's line about a compaction says who wrote the summary", () => {
  it("says offline, and when the model summariser is tried again, while it is paused", () => {
    expect(
      describeContextEvent(
        summary({ summarizer: "extractive", fallback: { reason: "paused", retryInCalls: 20 } }),
      ),
    ).toBe(
      "Compacted: summary freed 13K tokens (40K → 27K), by the offline summariser (no model): the model summariser is paused after failing, tried again in 20 model calls",
    );
    expect(
      describeContextEvent({
        type: "breaker-open",
        layer: "summary",
        consecutiveFailures: 3,
        retryInCalls: 20,
      }),
    ).toBe(
      "Compaction layer summary is paused after 3 failures in a row; it is tried again in 20 model calls",
    );
  });

  it("names the model, the offline summariser and the session notes, and says nothing of a layer that writes no summary", () => {
    expect(describeContextEvent(summary({ summarizer: "model" }))).toBe(
      "Compacted: summary freed 13K tokens (40K → 27K), by the model",
    );
    expect(describeContextEvent(summary({ summarizer: "extractive" }))).toMatch(
      /, by the offline summariser \(no model\)$/,
    );
    expect(describeContextEvent(summary({ layer: "session-memory", summarizer: "session-memory" }))).toMatch(
      /, by the session notes$/,
    );
    expect(
      describeContextEvent(summary({ summarizer: "extractive", fallback: { reason: "blocking-limit" } })),
    ).toMatch(
      /, by the offline summariser \(no model\): the context was at its limit, so no model was waited for$/,
    );
    expect(describeContextEvent(summary({ layer: "collapse" }))).toBe(
      "Compacted: collapse freed 13K tokens (40K → 27K)",
    );
  });
});
