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

// A resumed session's status goes on from the closed one's: the compactions so far (what `/context` and
// context_status say) and when the next compaction comes, before the first call after the resume.

const dir = tempDirPerTest("resume-status");

const inspect = keptInspectTool(printedPart);

function options(retainEntries: "context" | "all"): AgentSessionOptions {
  const provider = createInstantProvider(inspectingTurns(4, (call) => `Step ${call}.`));
  return longSessionOptions(provider, [inspect], dir.path, { retainEntries });
}

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
