import { readTranscript } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { anthropicSuite, echoTool, modelCalls, summaryText } from "../__fixtures__/session-kit.ts";
import {
  type AgentSession,
  type AgentSessionOptions,
  createAgentSession,
  PinLimitError,
  PinNotFoundError,
} from "../index.ts";

const suite = anthropicSuite("session-pins");

function options(extra: Partial<AgentSessionOptions> = {}): AgentSessionOptions {
  return {
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    tools: [echoTool],
    sessionsDir: suite.dir.path,
    context: { limits: { contextWindow: 32_000, maxOutputTokens: 4_000 } },
    permissions: { mode: "bypassPermissions" },
    ...extra,
  };
}

/** A long report whose first line names its part. */
function report(part: number): string {
  const lines = Array.from({ length: 150 }, (_, line) => `part ${part} line ${line}: all good`);
  return `REPORT-${part}\n${lines.join("\n")}`;
}

/** Four turns, each echoing one report (tool_use ids r0…r3). */
async function fourReports(session: AgentSession): Promise<void> {
  for (let part = 0; part < 4; part++) {
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: `r${part}`, name: "echo", input: { text: report(part) } }] },
      { kind: "reply", text: `Part ${part} is fine.` },
    );
    await session.send(`Check part ${part}.`).result();
  }
}

describe("session pins", () => {
  it("keep a pinned tool result verbatim after a compaction, and after a resume", async () => {
    const session = await createAgentSession(options());
    await fourReports(session);
    const item = await session.pin("r1", { by: "user" });
    expect(item.messageIds).toHaveLength(2);
    expect(session.pins().items.map((pinned) => pinned.messageId)).toEqual([item.messageId]);
    suite.fake.enqueue({ kind: "reply", text: summaryText("Parts 0 to 3 were checked.") });
    const report = await session.compact();
    expect(report.actions.map((action) => action.layer)).toEqual(["summary"]);
    suite.fake.enqueue({ kind: "reply", text: "Next." });
    await session.send("What next?").result();
    const request = JSON.stringify(modelCalls(suite.fake).at(-1));
    expect(request).toContain("REPORT-1");
    expect(request).toContain("part 1 line 149: all good");
    expect(request).not.toContain("part 2 line 149: all good");
    const { entries } = await readTranscript(session.transcriptPath, { quarantine: false });
    expect(entries.filter((entry) => entry.type === "pin")).toHaveLength(1);
    await session.close();

    const resumed = await createAgentSession(options({ resume: session.sessionId }));
    expect(resumed.pins().items.map((pinned) => [pinned.messageId, pinned.by])).toEqual([
      [item.messageId, "user"],
    ]);
    expect(await resumed.unpin("r1")).toBe(true);
    expect(resumed.pins().items).toEqual([]);
    await resumed.close();
  });

  it("pin the newest message for 'last', refuse an unknown id and a pin past the cap", async () => {
    const session = await createAgentSession(
      options({
        context: {
          limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
          config: { pins: { maxShare: 0.1 } },
        },
      }),
    );
    await expect(session.pin("last")).rejects.toBeInstanceOf(PinNotFoundError);
    await fourReports(session);
    const last = await session.pin("last");
    expect(last.messageId).toBe(session.messages.at(-1)?.id);
    await expect(session.pin("nothing-like-it")).rejects.toBeInstanceOf(PinNotFoundError);
    await session.pin("r0");
    const refused = await session.pin("r1").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PinLimitError);
    expect((refused as PinLimitError).capTokens).toBe(3_200);
    await session.close();
  });
});

describe("compact({ targetTokens })", () => {
  it("does nothing at or under the target, compacts until under it, and says why it stopped above one", async () => {
    const session = await createAgentSession(options());
    await fourReports(session);
    const idle = await session.compact(undefined, { targetTokens: 1_000_000 });
    expect(idle.actions).toEqual([]);
    expect(idle.target).toEqual({ tokens: 1_000_000, reached: true, rounds: 0 });

    const before = session.status().tokens;
    suite.fake.enqueue(
      { kind: "reply", text: summaryText("Parts 0 to 3 were checked.") },
      { kind: "reply", text: summaryText("Parts 0 to 3 were checked.") },
      { kind: "reply", text: summaryText("Parts 0 to 3 were checked.") },
    );
    const reached = await session.compact(undefined, { targetTokens: before - 500 });
    expect(reached.target).toMatchObject({ reached: true, rounds: 1 });
    expect(reached.tokensAfter).toBeLessThanOrEqual(before - 500);

    const unreachable = await session.compact(undefined, { targetTokens: 10 });
    expect(unreachable.target?.reached).toBe(false);
    expect(unreachable.target?.reason?.length).toBeGreaterThan(0);
    expect(unreachable.target?.rounds).toBeLessThanOrEqual(3);
    expect(unreachable.tokensAfter).toBeLessThanOrEqual(reached.tokensAfter);
    await expect(session.compact(undefined, { targetTokens: -5 })).rejects.toThrow(/targetTokens/);
    await session.close();
  });
});
