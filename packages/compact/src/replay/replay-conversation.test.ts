import { contentBlocks, createMessage, type Message, type RequestMessage } from "@unforget/core";
import { estimateMessageTokens, getModelPricing } from "@unforget/tokens";
import { toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { ContextOverflowError } from "../compact-error.ts";
import { type ContextManager, createContextManager } from "../manager/context-manager.ts";
import { createFixedLevelPolicy } from "../policy/compaction-policy.ts";
import { replayConversation } from "./replay-conversation.ts";
import type { ReplayCall } from "./replay-types.ts";

/** A long tool-heavy conversation that makes the ladder act at a 16K window. */
function conversation(turns: number, tool = "Read"): Message[] {
  const messages: Message[] = [
    createMessage("user", "Audit every module and keep notes.", {
      id: "u0",
      timestamp: "2026-01-01T00:00:00.000Z",
    }),
  ];
  for (let turn = 1; turn <= turns; turn++) {
    const time = new Date(Date.parse("2026-01-01T00:00:00.000Z") + turn * 30_000).toISOString();
    messages.push(
      createMessage(
        "assistant",
        [{ type: "tool_use", id: `t${turn}`, name: tool, input: { file_path: `m${turn}.ts` } }],
        {
          id: `a${turn}`,
          timestamp: time,
          responseId: `r${turn}`,
        },
      ),
      createMessage(
        "user",
        [
          {
            type: "tool_result",
            tool_use_id: `t${turn}`,
            content: `module ${turn}\n${"export const value = 1;\n".repeat(60)}`,
          },
        ],
        { id: `r${turn}`, timestamp: time },
      ),
    );
    if (turn % 10 === 0)
      messages.push(
        createMessage("user", `Keep going after module ${turn}.`, { id: `n${turn}`, timestamp: time }),
      );
  }
  messages.push(createMessage("assistant", "Done.", { id: "end", timestamp: "2026-01-01T02:00:00.000Z" }));
  return messages;
}

const replay = (messages: Message[], countRequest?: (request: readonly RequestMessage[]) => number) => {
  let counter = 0;
  return replayConversation(messages, {
    window: 16_000,
    system: "You are careful.",
    ...(countRequest ? { countRequest } : {}),
    createManager: (clock) =>
      createContextManager({
        model: "replay",
        limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
        clock,
        idFactory: (kind) => `${kind}-${++counter}`,
      }),
  });
};

/** A replay at 16K on the real manager with some of its methods replaced (a ladder that never acts, …). */
const replayWith = (messages: Message[], change: (manager: ContextManager) => Partial<ContextManager>) =>
  replayConversation(messages, {
    window: 16_000,
    createManager: (clock) => {
      const manager = createContextManager({
        model: "replay",
        limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
        clock,
      });
      return { ...manager, ...change(manager) };
    },
  });

describe("replayConversation", () => {
  it("counts each message once across calls and gives the same figures as counting every request afresh", async () => {
    const messages = conversation(80);
    const remembered = await replay(messages);
    const afresh = await replay(messages, (request) =>
      request.reduce(
        (sum, message) =>
          sum + estimateMessageTokens({ ...message, content: [...contentBlocks(message.content)] }),
        0,
      ),
    );
    expect(Object.values(remembered.stats.layers).some((layer) => layer.runs > 0)).toBe(true);
    expect(remembered.stats.violations).toEqual([]);
    expect(remembered.stats).toEqual(afresh.stats);
    expect(remembered.calls.map((call) => [call.tokens, call.prefixTokens])).toEqual(
      afresh.calls.map((call) => [call.tokens, call.prefixTokens]),
    );
  });

  it("still finds a user message that is neither in the request nor quoted", async () => {
    const messages = conversation(3);
    const { calls } = await replay(messages);
    expect(calls.every((call) => call.violations.length === 0)).toBe(true);
    // The same replay with a user message the manager never saw (it is only in the check's list) fails the check.
    const lost = createMessage("user", "A request that never reached the model.", {
      id: "lost",
      timestamp: "2026-01-01T00:00:01.000Z",
    });
    const withLost = [messages[0]!, lost, ...messages.slice(1)];
    const { stats } = await replayWith(withLost, (manager) => ({
      prepare: async (history, options) =>
        manager.prepare(
          history.filter((message) => message.id !== "lost"),
          options,
        ),
    }));
    expect(stats.violations.some((violation) => violation.includes("lost"))).toBe(true);
  });

  it("counts a request over the window as an overflow, not as an invariant violation", async () => {
    // A ladder that never acts: every request is the whole history, however long.
    const { stats } = await replayWith(conversation(80), (manager) => ({
      prepare: async (history) => ({
        messages: toRequestMessages(history),
        projected: [...history],
        tokensBefore: 0,
        tokens: 0,
        actions: [],
        status: manager.status(),
      }),
      recover: async () => {
        throw new Error("no reactive compaction in this test");
      },
    }));
    expect(stats.overflows).toBeGreaterThan(0);
    expect(stats.peakTokens).toBeGreaterThan(16_000);
    expect(stats.violations).toEqual([]);
  });

  it("with nothing to compact, costs what the unmanaged conversation costs and reuses at most all of a prefix", async () => {
    // No idle gap before the last answer: after one longer than the cache lives, clearing old outputs is free
    // and the working-set policy does it.
    const short = conversation(3).map((message) =>
      message.id === "end" ? { ...message, timestamp: "2026-01-01T00:02:00.000Z" } : message,
    );
    const { stats, calls } = await replay(short);
    expect(Object.values(stats.layers).every((layer) => layer.runs === 0)).toBe(true);
    expect(calls[0]?.prefixTokens).toBe(0);
    expect(stats.prefixReuse).toBeGreaterThan(0);
    expect(stats.prefixReuse).toBeLessThanOrEqual(1);
    expect(stats.inputCostUsd).toBeCloseTo(stats.slidingWindowInputCostUsd, 9);
  });

  it("goes on past a request the manager cannot fit (ContextOverflowError), counting it as an overflow", async () => {
    let gaveUp = false;
    const { stats, calls } = await replayWith(conversation(80), (manager) => ({
      prepare: async (history, options) => {
        if (history.length > 40 && !gaveUp) {
          gaveUp = true;
          throw new ContextOverflowError(20_000, 16_000, "cannot fit");
        }
        return manager.prepare(history, options);
      },
    }));
    expect(gaveUp).toBe(true);
    expect(calls.length).toBe(81);
    const given = calls.find((call) => call.tokens > 16_000);
    expect(given, "the call the manager gave up on").toBeDefined();
    expect(stats.overflows).toBeGreaterThanOrEqual(1);
    expect(stats.violations).toEqual([]);
  });

  it("sends every request with its cache breakpoints and bills it as the provider would", async () => {
    // Outputs of a tool the cheap layers may not clear: only summaries make room.
    const { calls, stats } = await replay(conversation(60, "Task"));
    for (const call of calls) {
      const last = call.request.messages.at(-1)!;
      expect(contentBlocks(last.content).at(-1)).toHaveProperty("cache_control", { type: "ephemeral" });
      // Before the last message, at most the last settled block carries one.
      const marked = call.request.messages
        .slice(0, -1)
        .flatMap((message) => contentBlocks(message.content).filter((block) => "cache_control" in block));
      expect(marked.length).toBeLessThanOrEqual(1);
      expect(JSON.stringify(call.messages)).not.toContain("cache_control");
      expect(call.request.system).toEqual([
        { type: "text", text: "You are careful.", cache_control: { type: "ephemeral" } },
      ]);
      const billed =
        call.billing.cacheReadTokens + call.billing.cacheWriteTokens + call.billing.uncachedTokens;
      expect(billed).toBe(call.tokens);
    }
    // Sonnet-tier prices by default: $3 per million uncached, $3.75 written, $0.30 read.
    const usd =
      (stats.uncachedInputTokens * 3 + stats.cacheWriteTokens * 3.75 + stats.cacheReadTokens * 0.3) /
      1_000_000;
    const summaries = (stats.summarizerInputTokens * 3 + stats.summarizerOutputTokens * 15) / 1_000_000;
    expect(stats.summarizerCalls).toBeGreaterThan(0);
    expect(stats.summarizerOutputTokens).toBeGreaterThan(0);
    expect(stats.inputCostUsd).toBeCloseTo(usd + summaries, 9);
    expect(stats.inputCost).toBe(Math.round((stats.inputCostUsd * 1_000_000) / 3));
  });

  it("prices the reference like the managed session: equal when nothing had to be dropped or compacted", async () => {
    let counter = 0;
    const { stats } = await replayConversation(conversation(12), {
      window: 200_000,
      system: "You are careful.",
      pricing: getModelPricing("claude-opus-4-6"),
      createManager: (clock) =>
        createContextManager({
          model: "replay",
          limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
          clock,
          idFactory: (kind) => `${kind}-${++counter}`,
          config: { microcompact: false, policy: createFixedLevelPolicy() },
        }),
    });
    expect(Object.values(stats.layers).every((layer) => layer.runs === 0)).toBe(true);
    expect(stats.slidingWindowInputCostUsd).toBeCloseTo(stats.inputCostUsd, 9);
    // Opus 4.6 input is $5 per million: the same dollars are fewer input tokens than at Sonnet's $3.
    expect(stats.inputCost).toBe(Math.round((stats.inputCostUsd * 1_000_000) / 5));
  });

  it("writes the whole prefix again after an idle gap longer than the cache lives, unless it lives an hour", async () => {
    const messages = conversation(12).map((message, index) =>
      index < 12
        ? message
        : { ...message, timestamp: new Date(Date.parse(message.timestamp) + 20 * 60_000).toISOString() },
    );
    const run = (cache?: { ttl: "1h" }) =>
      replayConversation(messages, {
        window: 200_000,
        ...(cache ? { cache } : {}),
        createManager: (clock) =>
          createContextManager({
            model: "replay",
            limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
            clock,
            config: { microcompact: false, policy: createFixedLevelPolicy() },
          }),
      });
    const fiveMinutes = await run();
    const hour = await run({ ttl: "1h" });
    const resumed = fiveMinutes.calls.find((call) => call.index === 7)!;
    expect(resumed.billing.cacheReadTokens).toBe(0);
    expect(hour.calls.find((call) => call.index === 7)!.billing.cacheReadTokens).toBeGreaterThan(0);
    expect(fiveMinutes.stats.cacheWriteTokens).toBeGreaterThan(hour.stats.cacheWriteTokens);
  });

  it("counts the error codes of tool outputs that the last request still holds", async () => {
    const messages = conversation(6);
    const failing = messages.findIndex((message) => message.id === "r2");
    messages[failing] = createMessage(
      "user",
      [
        {
          type: "tool_result",
          tool_use_id: "t2",
          content: "Traceback (most recent call last):\nValueError: bad literal\n  12: raise KeyError(name)",
          is_error: true,
        },
      ],
      { id: "r2", timestamp: messages[failing]!.timestamp },
    );
    const { stats } = await replay(messages);
    // KeyError is on a numbered source line: shown code, not an error that happened.
    expect(stats.errorCodes).toEqual({ seen: 1, kept: 1 });
  });

  it("charges an output cleared and then read again (same path, same command), and not one still held", async () => {
    // Module 1 is read again at the end: the ladder has folded its first read by then.
    const messages = conversation(60);
    const end = messages.pop()!;
    const time = "2026-01-01T00:30:30.000Z";
    messages.push(
      createMessage(
        "assistant",
        [
          { type: "tool_use", id: "again1", name: "Read", input: { file_path: "m1.ts" } },
          { type: "tool_use", id: "again60", name: "Read", input: { file_path: "m60.ts" } },
        ],
        { id: "a-again", timestamp: time, responseId: "r-again" },
      ),
      createMessage(
        "user",
        [
          { type: "tool_result", tool_use_id: "again1", content: "module 1 again" },
          { type: "tool_result", tool_use_id: "again60", content: "module 60 again" },
        ],
        { id: "r-again", timestamp: time },
      ),
      end,
    );
    const { stats, calls } = await replay(messages);
    const read = calls.find((call) => call.clearedThenNeeded.results > 0);
    // Only module 1's output went; module 60's (the newest round) is still in the request.
    expect(stats.clearedThenNeeded.results).toBe(1);
    expect(read?.index).toBe(calls.length - 1);
    const first = messages.find((message) => message.id === "r1")!.content[0]!;
    expect(stats.clearedThenNeeded.tokens).toBe(
      estimateMessageTokens({
        role: "user",
        content: [{ type: "text", text: (first as { content: string }).content }],
      }),
    );
    // Priced as a new result is: written to the cache once (1.25× the Sonnet tier's $3 input).
    expect(stats.clearedThenNeeded.costUsd).toBeCloseTo(
      (stats.clearedThenNeeded.tokens * 3.75) / 1_000_000,
      9,
    );

    // A manager that never reaches a level to act at keeps both: nothing to charge.
    const kept = await replayConversation(messages, {
      window: 1_000_000,
      createManager: (clock) =>
        createContextManager({
          model: "replay",
          limits: { contextWindow: 1_000_000, maxOutputTokens: 4_000 },
          clock,
          config: { policy: createFixedLevelPolicy() },
        }),
    });
    expect(kept.stats.clearedThenNeeded).toEqual({ results: 0, tokens: 0, costUsd: 0 });
  });
});

describe("a summariser model of its own", () => {
  it("prices the summaries at the summariser model's rates and the requests at the session model's", async () => {
    const run = (summaryPricing?: ReturnType<typeof getModelPricing>) => {
      let counter = 0;
      return replayConversation(conversation(120), {
        window: 16_000,
        pricing: getModelPricing("claude-sonnet-4-5"),
        ...(summaryPricing ? { summaryPricing } : {}),
        createManager: (clock) =>
          createContextManager({
            model: "claude-sonnet-4-5",
            limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
            config: { collapse: false, microcompact: false, observationMasking: false, snip: false },
            clock,
            idFactory: (kind) => `${kind}-${++counter}`,
          }),
      });
    };
    const sum = (calls: ReplayCall[], key: "summarizerCostUsd" | "inputCostUsd") =>
      calls.reduce((total, call) => total + call[key], 0);
    const same = await run();
    const cheaper = await run(getModelPricing("claude-haiku-4-5"));
    expect(sum(same.calls, "summarizerCostUsd")).toBeGreaterThan(0);
    // Haiku 4.5 is a third of Sonnet's price, input and output alike; the requests cost the same.
    expect(sum(cheaper.calls, "summarizerCostUsd")).toBeCloseTo(sum(same.calls, "summarizerCostUsd") / 3, 10);
    expect(sum(cheaper.calls, "inputCostUsd")).toBe(sum(same.calls, "inputCostUsd"));
  });
});
