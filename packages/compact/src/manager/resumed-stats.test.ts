import { createMessage, createUsage, type Message, type ToolContext } from "@unforget/core";
import { createTranscriptEntry, type TranscriptEntry } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { createContextManager } from "./context-manager.ts";
import { createContextStatusTool } from "./context-tools.ts";

// A resumed manager's status goes on from the closed run's: the compactions its transcript records, and the growth
// per call its last responses measured, so "compactions so far" and "compaction in about N turns" survive a resume.

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };
const toolContext: ToolContext = {
  signal: new AbortController().signal,
  sessionId: "session",
  toolUseId: "toolu_status",
  cwd: process.cwd(),
  sessionState: new Map(),
};

const statusText = async (manager: Parameters<typeof createContextStatusTool>[0]) =>
  String((await createContextStatusTool(manager).execute({}, toolContext)).content);

/** A subagent's reports: kept whole by the cheap layers, so a summary acts on them. */
function reports(c: ReturnType<typeof conversationBuilder>, from: number) {
  for (let part = from; part < from + 6; part++)
    c.tool("Task", { description: `log ${part}` }, filler(2_000, part));
  c.assistant("All read.");
}

/** A tool loop whose responses reported these sizes (window occupancy: input plus 10 output tokens). */
function measuredLoop(sizes: readonly number[], options: { responseIds?: readonly string[] } = {}) {
  const messages: Message[] = [createMessage("user", "Fix the build.", { id: "u0" })];
  sizes.forEach((size, index) => {
    const responseId = options.responseIds?.[index];
    messages.push(
      createMessage("assistant", [{ type: "tool_use", id: `toolu_${index}`, name: "Read", input: {} }], {
        id: `a${index}`,
        usage: createUsage({ inputTokens: size - 10, outputTokens: 10 }),
        ...(responseId ? { responseId } : {}),
      }),
      createMessage("user", [{ type: "tool_result", tool_use_id: `toolu_${index}`, content: "ok" }], {
        id: `r${index}`,
      }),
    );
  });
  return messages;
}

const asEntries = (messages: readonly Message[]): TranscriptEntry[] =>
  messages.map((message) => createTranscriptEntry({ type: "message", message }));

/** A closed run with two compactions: a boundary, then a partial one (the summary layer's decision). */
async function twoCompactions(retain: "context" | "all") {
  const c = conversationBuilder().user("Read the logs.");
  reports(c, 0);
  const written: TranscriptEntry[] = [];
  const closed = createContextManager({
    model: "m",
    limits: LIMITS,
    transcript: { append: (entries) => void written.push(...entries) },
    retainEntries: retain,
  });
  await closed.prepare(c.messages);
  await closed.compact(c.messages);
  c.user("And the next ones.");
  const second = c.messages.at(-1)!.id;
  reports(c, 6);
  const { projected } = await closed.prepare(c.messages);
  await closed.compact(c.messages, { range: { from: projected.findIndex(({ id }) => id === second) } });
  return { c, written, closed };
}

describe.each(["context", "all"] as const)("a resumed manager's status (retainEntries: %s)", (retain) => {
  it("counts the compactions the transcript records, boundaries and partial ones, and goes on from them", async () => {
    const { c, written, closed } = await twoCompactions(retain);
    expect(written.filter((entry) => entry.type === "compact_boundary")).toHaveLength(1);
    // The partial one is the summary layer's decision; the cheap layers' decisions are no compactions.
    const decisions = written.flatMap((entry) => (entry.type === "layer_decision" ? [entry.layer] : []));
    expect(decisions.filter((layer) => layer === "summary")).toHaveLength(1);
    expect(decisions.length).toBeGreaterThan(1);
    expect(closed.status().compactions).toBe(2);

    const resumed = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: written,
      retainEntries: retain,
    });
    expect(resumed.status().compactions).toBe(2);
    expect(await statusText(resumed)).toMatch(/Compactions so far: 2\./);

    c.user("Once more.");
    reports(c, 12);
    await resumed.compact(c.messages);
    expect(resumed.status().compactions).toBe(3);
  });

  it("taking over from another manager of the session (a change of model), goes on from its counts", async () => {
    const { c, closed } = await twoCompactions(retain);
    await closed.prepare([...c.messages, createMessage("user", "Go on.")]);
    const before = closed.status();
    const next = createContextManager({
      model: "m2",
      limits: LIMITS,
      resume: closed.entries,
      continues: closed,
      retainEntries: retain,
    });
    expect(next.status().compactions).toBe(2);
    expect(next.status().recompactionChain).toBe(before.recompactionChain);
    expect(next.status().growthUnknown).toBe(before.growthUnknown);
  });

  it("knows the rate of growth from the last responses' usages before any call", async () => {
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: asEntries(measuredLoop([10_000, 12_000, 14_500, 16_500])),
      retainEntries: retain,
    });
    const status = manager.status();
    // Growths of 2,000, 2,500 and 2,000: about 2,167 tokens a call.
    const expected = Math.ceil((status.threshold - status.tokens) / (6_500 / 3));
    expect(status.turnsUntilCompaction).toBe(expected);
    expect(status.growthUnknown).toBeUndefined();
    expect(await statusText(manager)).toContain(`compaction in about ${expected} turns at the recent rate`);
  });

  it("measures one response split into several messages once", async () => {
    const messages = measuredLoop([10_000, 10_000, 12_000, 14_000], {
      responseIds: ["resp_1", "resp_1", "resp_2", "resp_3"],
    });
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: asEntries(messages),
      retainEntries: retain,
    });
    const status = manager.status();
    expect(status.turnsUntilCompaction).toBe(Math.ceil((status.threshold - status.tokens) / 2_000));
  });

  it("leaves out the growth across an edit, and says why the rate is not known", async () => {
    const entries = asEntries(measuredLoop([10_000, 12_000, 14_000]));
    // The layer cleared a result before the last request: 12,000 to 14,000 is no growth.
    entries.splice(
      entries.length - 2,
      0,
      createTranscriptEntry({
        type: "layer_decision",
        layer: "microcompact",
        edits: [
          {
            kind: "replace_tool_result",
            toolUseIds: ["toolu_0"],
            details: { content: "[cleared]", reason: "cleared" },
          },
        ],
      }),
    );
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: entries,
      retainEntries: retain,
    });
    expect(manager.status().compactions).toBe(0);
    expect(manager.status().turnsUntilCompaction).toBeUndefined();
    expect(manager.status().growthUnknown).toMatch(/needs the growth of 2 calls and 1 is known/);
    expect(await statusText(manager)).toMatch(
      /when it comes is not known yet \(it needs the growth of 2 calls and 1 is known: the resumed transcript measured 1/,
    );
  });

  it("says when the transcript's responses carry no usage", async () => {
    const c = conversationBuilder().user("Go.");
    c.tool("Read", { file_path: "a.ts" }, "a").tool("Read", { file_path: "b.ts" }, "b").assistant("Done.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: asEntries(c.messages),
      retainEntries: retain,
    });
    expect(manager.status().turnsUntilCompaction).toBeUndefined();
    expect(await statusText(manager)).toMatch(/responses carry no usage to measure its growth by/);
  });
});

describe("a new manager's status", () => {
  it("says what the rate needs until two calls have grown the context", async () => {
    const manager = createContextManager({ model: "m", limits: LIMITS });
    expect(manager.status().growthUnknown).toBe("it needs the growth of 2 calls and 0 are known");
    expect(await statusText(manager)).toMatch(
      /when it comes is not known yet \(it needs the growth of 2 calls/,
    );
  });
});
