import { contentBlocks, createMessage, type Message, type RequestMessage } from "@unforget/core";
import { estimateMessageTokens } from "@unforget/tokens";
import { toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { ContextOverflowError } from "./compact-error.ts";
import { type ContextManager, createContextManager } from "./context-manager.ts";
import { replayConversation } from "./replay-conversation.ts";

/** A long tool-heavy conversation that makes the ladder act at a 16K window. */
function conversation(turns: number): Message[] {
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
        [{ type: "tool_use", id: `t${turn}`, name: "Read", input: { file_path: `m${turn}.ts` } }],
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
    const short = conversation(3);
    const { stats, calls } = await replay(short);
    expect(Object.values(stats.layers).every((layer) => layer.runs === 0)).toBe(true);
    expect(calls[0]?.prefixTokens).toBe(0);
    expect(stats.prefixReuse).toBeGreaterThan(0);
    expect(stats.prefixReuse).toBeLessThanOrEqual(1);
    expect(stats.inputCost).toBe(stats.naiveInputCost);
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
});
