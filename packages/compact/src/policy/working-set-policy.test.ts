import { createMessage, type Message } from "@unforget/core";
import { estimateMessageTokens } from "@unforget/tokens";
import { describe, expect, it } from "vitest";
import { createContextManager } from "../manager/context-manager.ts";
import { replayConversation } from "../replay/replay-conversation.ts";
import { createFixedLevelPolicy, type PolicyInput } from "./compaction-policy.ts";
import { createWorkingSetPolicy } from "./working-set-policy.ts";

const START = Date.parse("2026-01-01T00:00:00.000Z");

/** A task and `rounds` completed Read rounds of about `size` characters each, 30 s apart. */
function session(rounds: number, size = 4_000): Message[] {
  const messages: Message[] = [
    createMessage("user", "Read every module.", { id: "u0", timestamp: new Date(START).toISOString() }),
  ];
  for (let round = 1; round <= rounds; round++) {
    const timestamp = new Date(START + round * 30_000).toISOString();
    messages.push(
      createMessage(
        "assistant",
        [{ type: "tool_use", id: `t${round}`, name: "Read", input: { file_path: `m${round}.ts` } }],
        {
          id: `a${round}`,
          timestamp,
          responseId: `r${round}`,
        },
      ),
      createMessage(
        "user",
        [
          {
            type: "tool_result",
            tool_use_id: `t${round}`,
            content: `module ${round}\n${"const value = 1;\n".repeat(size / 17)}`,
          },
        ],
        { id: `o${round}`, timestamp },
      ),
    );
  }
  return messages;
}

const input = (messages: Message[], idleMs = 30_000): PolicyInput => ({
  tokens: 10_000,
  threshold: 167_000,
  blockingLimit: 190_000,
  contextWindow: 200_000,
  added: 2,
  idleMs,
  messages,
});

const tokens = (messages: readonly Message[]) =>
  messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);

describe("createWorkingSetPolicy", () => {
  it("folds the stale rounds when the cache-read rent paid on them equals the price of rewriting the rest", async () => {
    const messages = session(12);
    // Everything but the last two rounds is stale; a fold rewrites the rest: the task, 10 records, 2 rounds.
    const stale = tokens(messages.slice(1, 21));
    const rewritten = tokens([messages[0]!, ...messages.slice(21)]) + 10 * 25;
    // Sonnet-tier rates: a read costs 0.1 of an input token, a write 1.25.
    const foldsAt = Math.ceil((1.15 * rewritten) / (0.1 * stale));
    expect(foldsAt).toBeGreaterThan(1);
    const policy = createWorkingSetPolicy({ clearAtLeastShare: 0 });
    const plans = [];
    for (let call = 0; call <= foldsAt; call++) plans.push(await policy.plan(input(messages)));
    expect(plans.findIndex((plan) => plan.batch)).toBe(foldsAt);
    expect(plans[foldsAt]).toMatchObject({ batch: true, target: 0, minimumFreedTokens: 0 });
    // The rent starts again after a fold.
    expect((await policy.plan(input(messages))).batch).toBe(false);
  });

  it("acts at once when the cache has expired (the break is free), even with no stale rounds", async () => {
    const policy = createWorkingSetPolicy();
    expect((await policy.plan(input(session(12), 6 * 60_000))).batch).toBe(true);
    // No stale rounds, but finished turns' records may condense: free too.
    expect(await policy.plan(input(session(2), 6 * 60_000))).toMatchObject({ batch: true, target: 0 });
    expect((await policy.plan(input(session(2), 60_000))).batch).toBe(false);
    // With an hour-long cache, six idle minutes leave it warm.
    expect(
      (await createWorkingSetPolicy({ cacheTtl: "1h" }).plan(input(session(12), 6 * 60_000))).batch,
    ).toBe(false);
  });

  it("waits longer when writes cost more (the one-hour cache writes at 2×)", async () => {
    const callsUntilFold = async (cacheTtl: "5m" | "1h") => {
      const policy = createWorkingSetPolicy({ cacheTtl, clearAtLeastShare: 0 });
      for (let call = 0; call < 500; call++) if ((await policy.plan(input(session(12)))).batch) return call;
      return Number.POSITIVE_INFINITY;
    };
    expect(await callsUntilFold("1h")).toBeGreaterThan(await callsUntilFold("5m"));
  });

  it("keeps a long session's context well below the threshold and costs less than fixed levels", async () => {
    const messages = [
      ...session(120, 6_000),
      createMessage("assistant", "Done.", {
        id: "end",
        timestamp: new Date(START + 121 * 30_000).toISOString(),
      }),
    ];
    const replay = (policy?: "fixed") =>
      replayConversation(messages, {
        window: 200_000,
        createManager: (clock) =>
          createContextManager({
            model: "claude-sonnet-4-5",
            limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
            clock,
            ...(policy ? { config: { policy: createFixedLevelPolicy() } } : {}),
          }),
      });
    const workingSet = await replay();
    const fixed = await replay("fixed");
    expect(workingSet.stats.violations).toEqual([]);
    expect(workingSet.stats.layers.collapse!.runs).toBeGreaterThan(0);
    expect(workingSet.stats.peakTokens).toBeLessThan(fixed.stats.peakTokens / 2);
    expect(workingSet.stats.inputCostUsd).toBeLessThan(fixed.stats.inputCostUsd * 0.7);
  });

  it("folds between climbs only when the fold frees at least its share of the threshold (clear_at_least)", async () => {
    const messages = session(12);
    const freed = tokens(messages.slice(1, 21)) - 10 * 25;
    const callsUntilFold = async (clearAtLeastShare: number) => {
      const policy = createWorkingSetPolicy({ clearAtLeastShare });
      for (let call = 0; call < 200; call++) if ((await policy.plan(input(messages))).batch) return call;
      return Number.POSITIVE_INFINITY;
    };
    expect(await callsUntilFold((freed - 100) / 167_000)).toBeLessThan(200);
    expect(await callsUntilFold((freed + 100) / 167_000)).toBe(Number.POSITIVE_INFINITY);
  });

  it("falls to the floor at once past the ceiling, and reports the ceiling and the floor", async () => {
    const messages = session(12);
    const policy = createWorkingSetPolicy({ ceilingShare: 0.1, clearAtLeastShare: 0 });
    // Under the ceiling: no rent paid yet, no fold.
    expect((await policy.plan({ ...input(messages), tokens: 16_000 })).batch).toBe(false);
    expect(policy.levels?.()).toEqual({ ceiling: undefined, floor: undefined });
    // Past it: one break, whatever the rent.
    const fall = await policy.plan({ ...input(messages), tokens: 17_000 });
    expect(fall).toMatchObject({ batch: true, target: 0, minimumFreedTokens: 0 });
    expect(policy.levels?.()).toEqual({
      ceiling: 17_000,
      floor: 17_000 - (tokens(messages.slice(1, 21)) - 10 * 25),
    });
    // The manager's status carries them (after a cold start, which makes the working set fall at once).
    let now = START;
    const manager = createContextManager({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: () => now,
    });
    await manager.prepare(messages.slice(0, 3));
    expect(manager.status().workingSet).toEqual({ ceiling: undefined, floor: undefined });
    now = START + 2 * 3_600_000;
    await manager.prepare([
      ...messages,
      createMessage("user", "Go on.", { timestamp: new Date(now).toISOString() }),
    ]);
    expect(manager.status().workingSet?.ceiling).toBeGreaterThan(manager.status().workingSet?.floor ?? 0);
  });
});
