import type { SummaryEntry } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { CompactionFailedError } from "../compact-error.ts";
import { BREAKER_COOL_DOWN_CALLS, BREAKER_THRESHOLD } from "../defaults.ts";
import type { ContextEvent } from "../manager/context-events.ts";
import { createContextManager } from "../manager/context-manager.ts";
import type { Summarizer } from "./summarizer.ts";
import { renderSummarySections } from "./summary-format.ts";

/** A model summariser stand-in: fails while `down`, else writes a short nine-section summary. */
function flakyModel(state: { down: boolean }): Summarizer {
  return {
    name: "model",
    async summarize() {
      if (state.down) throw new CompactionFailedError("summary", "The summary call failed (overloaded).");
      return { text: renderSummarySections(new Map()), inputTokens: 100, outputTokens: 50, calls: 1 };
    },
  };
}

describe("which summariser wrote each summary", () => {
  it("is in the event and the transcript entry; while the model summariser is paused, so is when it is tried again", async () => {
    const state = { down: false };
    const events: ContextEvent[] = [];
    const c = conversationBuilder().user("Keep the service running.");
    const manager = createContextManager({
      model: "replay",
      limits: { contextWindow: 30_000, maxOutputTokens: 4_000 },
      summarizer: flakyModel(state),
      clock: c.now,
      config: { collapse: false, earlyMark: false },
      onEvent: (event) => events.push(event),
    });
    // The summaries' reports (the tool-result budget also reports, when it cuts a large output on arrival).
    const summaries = () =>
      events.filter(
        (event): event is Extract<ContextEvent, { type: "layer" }> =>
          event.type === "layer" && event.layer === "summary",
      );
    const entries = () =>
      manager.entries.filter(
        (entry): entry is SummaryEntry => entry.type === "summary" && entry.kind === "compact",
      );
    let turn = 0;
    const until = async (done: () => boolean) => {
      for (let step = 0; !done() && step < 200; step++, turn++) {
        c.tool("Task", { description: `part ${turn}` }, filler(1_500, turn));
        await manager.prepare(c.messages);
      }
      expect(done()).toBe(true);
    };

    await until(() => summaries().length === 1);
    expect(summaries()[0]).toMatchObject({ summarizer: "model" });
    expect(summaries()[0]!.fallback).toBeUndefined();
    expect(entries()[0]).toMatchObject({ summarizer: "model" });
    expect(entries()[0]!.fallback).toBeUndefined();

    state.down = true;
    await until(() => summaries().length === 2);
    const opened = events.find((event) => event.type === "breaker-open");
    expect(opened).toEqual({
      type: "breaker-open",
      layer: "summary",
      consecutiveFailures: BREAKER_THRESHOLD,
      retryInCalls: BREAKER_COOL_DOWN_CALLS,
    });
    expect(summaries()[1]).toMatchObject({
      summarizer: "extractive",
      fallback: { reason: "paused", retryInCalls: BREAKER_COOL_DOWN_CALLS },
    });
    expect(entries()[1]).toMatchObject({ summarizer: "extractive", fallback: "paused" });

    // The next summary while it rests says how many calls are left.
    await until(() => summaries().length === 3);
    const third = summaries()[2]!;
    expect(third).toMatchObject({ summarizer: "extractive", fallback: { reason: "paused" } });
    expect(third.fallback!.retryInCalls).toBeGreaterThan(0);
    expect(third.fallback!.retryInCalls).toBeLessThan(BREAKER_COOL_DOWN_CALLS);
  });
});
