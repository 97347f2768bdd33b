import { join } from "node:path";
import { ContextOverflowError } from "@unforget/compact";
import type { Tool } from "@unforget/core";
import type { HookPlugin } from "@unforget/hooks";
import type { FakeStep } from "@unforget/testing/fakes";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  collect,
  isSummaryRequest,
  modelCalls,
  summaryText,
} from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "./agent-session.ts";
import type { SessionEvent } from "./session-events.ts";

const suite = anthropicSuite("window");
const WINDOW = 32_000;

/** A tool whose results compaction must keep (no cheap layer clears them): only summaries make room. */
function reportTool(tokens: number): Tool {
  return {
    name: "fetch_report",
    description: "Fetches a report.",
    inputSchema: { type: "object", properties: { part: { type: "number" } }, required: ["part"] },
    readOnly: true,
    concurrencySafe: true,
    resultRetention: "keep",
    async execute(input) {
      const part = Number(input.part);
      const lines = Array.from(
        { length: Math.ceil(tokens / 12) },
        (_, line) => `part ${part} row ${line}: value ${line * part}`,
      );
      return { content: lines.join("\n"), isError: false };
    },
  };
}

function session(tools: Tool[], extra: Record<string, unknown> = {}) {
  return createAgentSession({
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    tools,
    sessionsDir: join(suite.dir.path, "sessions"),
    cwd: suite.dir.path,
    permissions: { mode: "bypassPermissions" },
    context: { limits: { contextWindow: WINDOW, maxOutputTokens: 4_000 } },
    ...extra,
  });
}

/** The requests' sizes as the session measured them, and the largest as the fake counted it. */
function measured(events: readonly SessionEvent[]) {
  const sizes = events.flatMap((event) => (event.type === "model-request" ? [event.tokens] : []));
  const counted = modelCalls(suite.fake)
    .filter((body) => !isSummaryRequest(body))
    .map((body) => suite.fake.countTokens(body));
  return { sizes, counted };
}

/**
 * A model that asks for part 0, 1, … of the report, one call a turn, until thirty; its summaries lack their sections
 * (the model summariser rejects them).
 */
function fetchThirtyParts(): void {
  let calls = 0;
  suite.fake.setResponder((request): FakeStep => {
    if (isSummaryRequest(request.body)) return { kind: "reply", text: "Everything went fine." };
    if (calls >= 30) return { kind: "reply", text: "All parts fetched." };
    return {
      kind: "reply",
      text: `Part ${calls}.`,
      toolCalls: [{ name: "fetch_report", input: { part: calls++ } }],
    };
  });
}

/** One turn's events, and the error it ended with (undefined when it ended normally). */
async function sendCollecting(
  agent: Awaited<ReturnType<typeof session>>,
  prompt: string,
): Promise<{ events: SessionEvent[]; outcome: unknown }> {
  const events: SessionEvent[] = [];
  const outcome = await (async () => {
    for await (const event of agent.send(prompt)) events.push(event);
  })().then(
    () => undefined,
    (error: unknown) => error,
  );
  return { events, outcome };
}

describe("every compaction path ends under the window, or ends the turn with a typed error", () => {
  it("a model whose summaries are rejected: the offline fallback takes over, and no request goes over the window", async () => {
    fetchThirtyParts();
    const agent = await session([reportTool(2_500)]);
    const events = await collect(agent.send("Fetch the thirty parts of the report."));
    const end = events.at(-1);
    const { sizes, counted } = measured(events);
    expect(end).toMatchObject({ type: "turn-end", stopReason: "end_turn" });
    // The context passed the threshold: the model's summaries were rejected, the offline one took over.
    const layers = events.flatMap((event) =>
      event.type === "context" && event.event.type === "layer" ? [event.event] : [],
    );
    expect(layers.some((layer) => layer.layer === "summary" && layer.summarizer === "extractive")).toBe(true);
    expect(sizes.length).toBe(31);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(WINDOW);
    for (const size of counted) expect(size).toBeLessThanOrEqual(WINDOW);
    await agent.close();
  }, 120_000);

  it("a PreCompact plugin that vetoes every compaction: the emergency path still runs, or the turn ends with ContextOverflowError", async () => {
    const veto: HookPlugin = {
      name: "veto-everything",
      apply(hooks) {
        hooks.preCompact.tapPromise("veto-everything", async (result) => ({
          ...result,
          veto: { reason: "no" },
        }));
      },
    };
    fetchThirtyParts();
    const agent = await session([reportTool(2_500)], { hooks: { plugins: [veto] } });
    const { events, outcome } = await sendCollecting(agent, "Fetch the thirty parts of the report.");
    const { sizes, counted } = measured(events);
    if (outcome !== undefined) expect(outcome).toBeInstanceOf(ContextOverflowError);
    else expect(events.at(-1)).toMatchObject({ type: "turn-end", stopReason: "end_turn" });
    expect(sizes.length).toBeGreaterThan(20);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(WINDOW);
    for (const size of counted) expect(size).toBeLessThanOrEqual(WINDOW);
    await agent.close();
  }, 120_000);

  /** One turn under a system prompt of `rows` rows no layer may touch; what it sent, and how it ended. */
  async function turnUnderSystemPrompt(rows: number) {
    suite.fake.setResponder((request): FakeStep => {
      if (isSummaryRequest(request.body)) return { kind: "reply", text: "Everything went fine." };
      return { kind: "reply", text: "Read." };
    });
    const table = Array.from({ length: rows }, (_, row) => `row ${row}: value ${row * 7}`).join("\n");
    const agent = await session([reportTool(500)], { system: `Answer from these rows.\n${table}` });
    const { events, outcome } = await sendCollecting(agent, "Read the rows.");
    const status = agent.status();
    await agent.close();
    return { outcome, events, status, ...measured(events) };
  }

  it("past the blocking limit yet leaving the reply its room, the request goes out", async () => {
    // About 27.5K tokens of system prompt: past the blocking limit (27K), under the effective window (28K).
    const { outcome, events, status, sizes, counted } = await turnUnderSystemPrompt(3_650);
    expect(outcome).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "turn-end", stopReason: "end_turn" });
    expect(sizes.length).toBeGreaterThan(0);
    for (const size of sizes) {
      expect(size).toBeGreaterThanOrEqual(status.blockingLimit);
      expect(size).toBeLessThan(status.effectiveWindow);
    }
    for (const size of counted) expect(size).toBeLessThanOrEqual(WINDOW);
  }, 120_000);

  it("past the effective window and under the window, the turn ends with ContextOverflowError instead of a request", async () => {
    // About 29.4K tokens of system prompt: under the 32K window, but the 4K reply would not fit beside it.
    const { outcome, sizes, status } = await turnUnderSystemPrompt(3_900);
    expect(outcome).toBeInstanceOf(ContextOverflowError);
    expect((outcome as ContextOverflowError).limitTokens).toBe(status.effectiveWindow);
    expect((outcome as Error).message).toContain("/compact");
    expect((outcome as Error).message).toContain("/clear");
    expect((outcome as Error).message).toContain("larger window");
    expect(sizes).toEqual([]);
  }, 120_000);

  it.each([1_400, 2_300, 5_000])(
    "eight parallel calls returning %i tokens each never push the next request over the window, and the turn ends normally",
    async (tokens) => {
      let rounds = 0;
      suite.fake.setResponder((request): FakeStep => {
        if (isSummaryRequest(request.body)) return { kind: "reply", text: "Everything went fine." };
        if (rounds >= 10) return { kind: "reply", text: "All parts fetched." };
        const round = rounds++;
        return {
          kind: "reply",
          text: `Round ${round}.`,
          toolCalls: Array.from({ length: 8 }, (_, index) => ({
            name: "fetch_report",
            input: { part: round * 8 + index },
          })),
        };
      });
      // Under, near and over the size at which a single result is cut: the eight results of a round share one
      // message's room (saved, or cut to their share of it), and the ladder makes room for them on arrival.
      const agent = await session([reportTool(tokens)]);
      const { events, outcome } = await sendCollecting(agent, "Fetch the report, eight parts at a time.");
      const { sizes, counted } = measured(events);
      expect(outcome).toBeUndefined();
      expect(events.at(-1)).toMatchObject({ type: "turn-end", stopReason: "end_turn" });
      expect(sizes).toHaveLength(11);
      for (const size of sizes) expect(size).toBeLessThanOrEqual(WINDOW);
      for (const size of counted) expect(size).toBeLessThanOrEqual(WINDOW);
      await agent.close();
    },
    120_000,
  );

  it("compact({ preview: true }) shows the summary and the token change, and applies nothing", async () => {
    suite.fake.setResponder((request): FakeStep | undefined =>
      isSummaryRequest(request.body)
        ? { kind: "reply", text: summaryText("Fetched parts 0 to 5.") }
        : undefined,
    );
    suite.fake.enqueue(
      ...Array.from(
        { length: 6 },
        (_, part): FakeStep => ({
          kind: "reply",
          toolCalls: [{ name: "fetch_report", input: { part } }],
        }),
      ),
      { kind: "reply", text: "Fetched." },
    );
    const agent = await session([reportTool(1_500)]);
    await agent.send("Fetch six parts.").result();
    suite.fake.enqueue({ kind: "reply", text: "Next." });
    await agent.send("Thanks.").result();
    const messages = agent.messages.length;
    const preview = await agent.compact(undefined, { preview: true });
    expect(preview.actions).toEqual([]);
    expect(preview.preview?.summary).toContain("Fetched parts 0 to 5.");
    expect(preview.preview?.tokensAfter).toBeLessThan(preview.tokensBefore);
    expect(preview.tokensAfter).toBe(preview.tokensBefore);
    expect(agent.messages.length).toBe(messages);
    const applied = await agent.compact();
    expect(applied.actions.map((action) => action.layer)).toEqual(["summary"]);
    await agent.close();
  }, 120_000);
});
