import { describe, expect, it } from "vitest";
import {
  createInstantProvider,
  inspectingTurns,
  keptInspectTool,
  longSessionOptions,
  printedPart,
} from "../../bench/instant-provider.ts";
import { tempDirPerTest } from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";

// The gauge of a resumed session: before its first call it shows the context the session had when it was
// closed, as the provider will count it, and the first call after the resume goes on from there (no compaction
// that the closed session would not have made).

const dir = tempDirPerTest("resume-gauge");

const inspect = keptInspectTool(printedPart);

/** Four tool calls a turn, then the end of the turn; usage is what the provider counts of each request. */
function options(retainEntries: "context" | "all"): AgentSessionOptions {
  const provider = createInstantProvider(inspectingTurns(4, (call) => `Step ${call}.`));
  return longSessionOptions(provider, [inspect], dir.path, { retainEntries });
}

describe.each(["context", "all"] as const)("the gauge right after a resume (retainEntries: %s)", (retain) => {
  it.each([
    ["without a compaction", 1],
    ["after compactions", 6],
  ])("%s: is the closed session's context, and what the first request after it counts", async (_, turns) => {
    const given = options(retain);
    const first = await createAgentSession(given);
    for (let turn = 1; turn <= turns; turn++) await first.send(`Next step ${turn}.`).result();
    expect(first.status().compactions > 0).toBe(turns > 1);
    // The closed session's context as the provider counted it: its last request (the last answer's usage).
    const closed = first.messages.at(-1)?.usage?.inputTokens ?? 0;
    await first.close();

    const resumed = await createAgentSession({ ...given, resume: first.sessionId });
    const { tokens: gauge, compactions } = resumed.status();
    // The first request after the resume: its count (the gauge while the model answers) and the provider's.
    let requestCount: number | undefined;
    let reported: number | undefined;
    for await (const event of resumed.send("Go on.")) {
      if (event.type !== "message" || event.message.role !== "assistant" || reported !== undefined) continue;
      requestCount = resumed.status().tokens;
      reported = event.message.usage?.inputTokens;
      // Nothing was compacted for it: the context had not grown since the closed session's last request.
      expect(resumed.status().compactions).toBe(compactions);
    }
    await resumed.close();
    // Before: an estimate of the whole resumed context, padded and uncalibrated, about twice these.
    expect(reported).toBeGreaterThan(0);
    expect(Math.abs(gauge - reported!)).toBeLessThanOrEqual(reported! * 0.02);
    expect(Math.abs(requestCount! - gauge)).toBeLessThanOrEqual(reported! * 0.02);
    expect(closed).toBeGreaterThan(0);
    expect(Math.abs(gauge - closed)).toBeLessThanOrEqual(closed * 0.02);
  });

  it("closed right after a compaction: is what the first request after it counts, system prompt and tools included", async () => {
    const given = { ...options(retain), system: "You are a careful agent. ".repeat(100) };
    const first = await createAgentSession(given);
    for (let turn = 1; turn <= 2; turn++) await first.send(`Next step ${turn}.`).result();
    const report = await first.compact();
    expect(report.actions.length).toBeGreaterThan(0);
    await first.close();

    const resumed = await createAgentSession({ ...given, resume: first.sessionId });
    const gauge = resumed.status().tokens;
    let requestCount: number | undefined;
    for await (const event of resumed.send("Go on.")) {
      if (event.type === "message" && event.message.role === "assistant" && requestCount === undefined)
        requestCount = resumed.status().tokens;
    }
    await resumed.close();
    // No response measured the context since the compaction: both are the estimate, the prompt's few tokens apart.
    expect(requestCount! - gauge).toBeGreaterThan(0);
    expect(requestCount! - gauge).toBeLessThan(20);
  });
});

// A resumed session's status goes on from the closed one's: the compactions so far (what `/context` and
// context_status say) and when the next compaction comes, before the first call after the resume.
describe.each(["context", "all"] as const)("a resumed session's status (retainEntries: %s)", (retain) => {
  it("counts the closed session's compactions and knows when the next one comes", async () => {
    const given = options(retain);
    const first = await createAgentSession(given);
    for (let turn = 1; turn <= 6; turn++) await first.send(`Next step ${turn}.`).result();
    const closed = first.status();
    await first.close();
    expect(closed.compactions).toBeGreaterThan(1);
    expect(closed.turnsUntilCompaction).toBeDefined();

    const resumed = await createAgentSession({ ...given, resume: first.sessionId });
    const status = resumed.status();
    expect(status.compactions).toBe(closed.compactions);
    // From the growth the transcript's last responses measured: near the closed session's, which also counted
    // the tool results that no response measured yet.
    expect(Math.abs(status.turnsUntilCompaction! - closed.turnsUntilCompaction!)).toBeLessThanOrEqual(
      closed.turnsUntilCompaction! / 2,
    );
    expect(status.growthUnknown).toBeUndefined();
    await resumed.send("Go on.").result();
    expect(resumed.status().compactions).toBeGreaterThanOrEqual(closed.compactions);
    await resumed.close();
  });

  it("after a change of model, still counts the compactions so far and knows when the next one comes", async () => {
    const session = await createAgentSession(options(retain));
    for (let turn = 1; turn <= 6; turn++) await session.send(`Next step ${turn}.`).result();
    const before = session.status();
    expect(before.compactions).toBeGreaterThan(1);
    session.setModel("claude-haiku-4-5");
    const after = session.status();
    expect(after.compactions).toBe(before.compactions);
    expect(after.turnsUntilCompaction).toBeDefined();
    await session.send("Go on.").result();
    expect(session.status().compactions).toBeGreaterThanOrEqual(before.compactions);
    await session.close();
  });
});
