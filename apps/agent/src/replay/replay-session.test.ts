import { createMessage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import type { LoadedSession } from "../load-session.ts";
import { replayOutcome } from "./replay-command.ts";
import { replaySession, requestShape, windowAdvice } from "./replay-session.ts";
import { renderReplayTable } from "./replay-table.ts";

const session = (model: string | undefined): LoadedSession => ({
  path: "session.jsonl",
  format: "claude-code",
  messages: [createMessage("user", "hi"), createMessage("assistant", "hello")],
  ...(model === undefined ? {} : { model }),
  problems: [],
  sidechainSkipped: 0,
});

describe("requestShape", () => {
  it("never names a deprecated model: the requests name the one to use instead, and say so", () => {
    const shape = requestShape(session("claude-3-sonnet-20240229"), 16_000);
    expect(shape.model).toBe("claude-sonnet-4-6");
    expect(shape.modelNote).toBe(
      "The session used claude-3-sonnet-20240229, which is deprecated (end of life 2025-07-21): the requests name claude-sonnet-4-6.",
    );
    expect(requestShape(session("claude-sonnet-4-5-20250929"), 16_000).model).toBe("claude-sonnet-4-6");
  });

  it("keeps a current Claude model, and names the Anthropic default for any other", () => {
    expect(requestShape(session("claude-opus-4-6"), 16_000)).toMatchObject({ model: "claude-opus-4-6" });
    expect(requestShape(session("claude-opus-4-6"), 16_000).modelNote).toBeUndefined();
    expect(requestShape(session("gpt-4o"), 16_000).model).toBe("claude-sonnet-4-6");
    expect(requestShape(session(undefined), 16_000).model).toBe("claude-sonnet-4-6");
  });
});

describe("replayOutcome", () => {
  const stats = { calls: 10, window: 8_000, overflows: 0, violations: [] as string[] };
  const outcome = (changes: Partial<typeof stats>) =>
    replayOutcome({ ...stats, ...changes } as Parameters<typeof replayOutcome>[0]);

  it("exits 0 on a clean replay, 3 on overflows and 4 on a broken invariant, which wins", () => {
    expect(outcome({})).toEqual({ exitCode: 0 });
    expect(outcome({ overflows: 2 })).toEqual({
      exitCode: 3,
      line: "unforget: 2 of 10 requests were over the 8K-token window: the ladder could not keep this session inside it; replay at a larger --window (exit code 3).",
    });
    const broken = outcome({ overflows: 1, violations: ["call 3: tool_use toolu_1 has no result"] });
    expect(broken.exitCode).toBe(4);
    expect(broken.line).toContain("broke 1 invariant (listed with the results): that is a bug in unforget");
  });
});

describe("a replay in which no layer acts", () => {
  it("names a window that would make the ladder act, and only one smaller than the window used", () => {
    const advice = (peakTokens: number, window: number) =>
      windowAdvice({ stats: { peakTokens, window } } as never);
    expect(advice(30_000, 200_000)).toBe(
      "the whole session fits the 200K window (its largest request is 30,000 tokens). Try --window 18K to see the ladder at work.",
    );
    expect(advice(12_000, 16_000)).toMatch(/no window a replay takes \(8K at least\) is small enough/);
    expect(advice(257, 16_000)).toMatch(/no window a replay takes/);
    expect(advice(40_000, 16_000)).not.toContain("Try --window");
  });

  it("says so in the table, and does not call a layer that acts only when asked 'not needed'", async () => {
    const replay = await replaySession(session("claude-opus-4-6"), { window: 16_000 });
    const table = renderReplayTable(replay, "tiny");
    expect(table).toContain("No layer had to act: the whole session fits the 16K window");
    expect(table).not.toContain("Try --window 16K");
    expect(table).toContain("Only when the model asks for it, which a replay never does: Snip.");
    expect(table).not.toMatch(/Not needed: .*Snip/);
  });
});

describe("a summariser model of its own", () => {
  it("bills the summaries at the summariser model's prices, the requests at the session model's", async () => {
    const long: LoadedSession = {
      ...session("claude-sonnet-4-6"),
      messages: Array.from({ length: 80 }, (_, index) =>
        createMessage(
          index % 2 === 0 ? "user" : "assistant",
          `Step ${index}: ${"the release notes name every module and its owner. ".repeat(40)}`,
        ),
      ),
    };
    const sum = (
      replay: Awaited<ReturnType<typeof replaySession>>,
      key: "summarizerCostUsd" | "inputCostUsd",
    ) => replay.calls.reduce((total, call) => total + call[key], 0);
    const same = await replaySession(long, { window: 16_000 });
    const cheaper = await replaySession(long, { window: 16_000, summarizerModel: "claude-haiku-4-5" });
    expect(sum(same, "summarizerCostUsd")).toBeGreaterThan(0);
    // Haiku 4.5 costs a third of Sonnet 4.6, input and output alike.
    expect(sum(cheaper, "summarizerCostUsd")).toBeCloseTo(sum(same, "summarizerCostUsd") / 3, 10);
    expect(sum(cheaper, "inputCostUsd")).toBe(sum(same, "inputCostUsd"));
    expect(renderReplayTable(cheaper, "long")).toContain(
      "summaries by claude-haiku-4-5: $1 input, $5 output",
    );
    expect(renderReplayTable(same, "long")).not.toContain("summaries by");
  });
});
