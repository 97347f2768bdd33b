import { createMessage, InvalidOperationError, type Message } from "@unforget/core";
import {
  createTranscriptEntry,
  projectMessages,
  type TranscriptEntry,
  toRequestMessages,
} from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { createContextManager } from "../manager/context-manager.ts";
import { retainedEntries } from "./retained-entries.ts";

const LIMITS = { contextWindow: 16_000, maxOutputTokens: 2_000 };
const counter = () => {
  let next = 0;
  return (kind: string) => `${kind}-${++next}`;
};

/** Two managers over the same conversation, one keeping every entry, one only what the context reads. */
function managers(clock: () => number) {
  const written = { all: [] as TranscriptEntry[], context: [] as TranscriptEntry[] };
  const make = (retainEntries: "all" | "context") =>
    createContextManager({
      model: "test-model",
      limits: LIMITS,
      clock,
      idFactory: counter(),
      retainEntries,
      transcript: { append: (entries) => void written[retainEntries].push(...entries) },
    });
  return { all: make("all"), context: make("context"), written };
}

describe("retainEntries: context", () => {
  it("sends the requests of a manager that keeps everything, holding entries that do not grow with the session", async () => {
    const c = conversationBuilder().user("The task: port the parser. Rule: never edit generated files.");
    const { all, context, written } = managers(c.now);
    // The caller keeps only what the context still reads (as the session does), plus the last message it passed.
    let kept: Message[] = [];
    let mostEntries = 0;
    let mostKept = 0;
    for (let turn = 0; turn < 240; turn++) {
      if (turn % 9 === 0) c.user(`Request ${turn}: keep going with part ${turn}.`);
      // Results that may be cleared and results that must stay, so both the cheap layers and summaries act.
      c.tool(turn % 3 === 0 ? "Bash" : "Task", { command: `part ${turn}` }, filler(1_200, turn));
      if (turn === 4) {
        const target = c.messages.findLast((message) => message.role === "user" && !message.isMeta)!.id;
        await all.pin(c.messages, target);
        await context.pin(
          [...kept, ...c.messages.slice(kept.length === 0 ? 0 : indexAfter(c.messages, kept))],
          target,
        );
      }
      const expected = await all.prepare(c.messages);
      const passed = [...kept, ...c.messages.slice(kept.length === 0 ? 0 : indexAfter(c.messages, kept))];
      const got = await context.prepare(passed);
      expect(JSON.stringify(got.messages)).toBe(JSON.stringify(expected.messages));
      const retained = new Set(
        context.entries.flatMap((entry) => (entry.type === "message" ? [entry.id] : [])),
      );
      kept = passed.filter((message, index) => index === passed.length - 1 || retained.has(message.id));
      if (context.status().compactions > 0) {
        mostEntries = Math.max(mostEntries, context.entries.length);
        mostKept = Math.max(mostKept, kept.length);
      }
    }
    expect(context.status().compactions).toBeGreaterThan(20);
    expect(context.status().compactions).toBe(all.status().compactions);
    // The transcript receives every entry either way, in the same order.
    expect(JSON.stringify(written.context)).toBe(JSON.stringify(written.all));
    // What stays in memory is bounded by the context, not by the session's length (which the full list is).
    expect(all.entries.length).toBeGreaterThan(700);
    expect(mostEntries).toBeLessThan(60);
    expect(mostKept).toBeLessThan(40);
    // The entries kept project to the request sent, and so does the whole transcript.
    expect(JSON.stringify(toRequestMessages(projectMessages(context.entries)))).toBe(
      JSON.stringify(toRequestMessages(projectMessages(written.context))),
    );
    // A manager rebuilt from what is kept (a model change) continues from the same context.
    const rebuilt = createContextManager({
      model: "other-model",
      limits: LIMITS,
      clock: c.now,
      resume: context.entries,
      retainEntries: "context",
    });
    expect(rebuilt.pins().items.map((item) => item.messageId)).toEqual(
      context.pins().items.map((item) => item.messageId),
    );
    const resumedRequest = await rebuilt.prepare(kept);
    const request = await context.prepare(kept);
    expect(JSON.stringify(resumedRequest.messages)).toBe(JSON.stringify(request.messages));
  });

  it("keeps the last message passed when a summary kept none, so a manager rebuilt from the entries does not take it for new", async () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const a = createMessage("user", "Port the parser.");
    const b = createMessage("assistant", "Ported.");
    const entries = [
      createTranscriptEntry({ type: "message", message: a }, { now }),
      createTranscriptEntry({ type: "message", message: b }, { now }),
      createTranscriptEntry(
        {
          type: "compact_boundary",
          id: "boundary-1",
          trigger: "manual",
          layer: "summary",
          tokensBefore: 40,
          tokensAfter: 20,
          messagesSummarized: 2,
          logicalParentId: b.id,
        },
        { now },
      ),
      createTranscriptEntry(
        {
          type: "summary",
          id: "summary-1",
          kind: "compact",
          text: "The parser was ported.",
          boundaryId: "boundary-1",
        },
        { now },
      ),
    ];
    const kept = retainedEntries(entries, b.id);
    expect(kept.map((entry) => entry.id)).toEqual([b.id, "boundary-1", "summary-1"]);
    const rebuilt = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: kept,
      retainEntries: "context",
    });
    // The caller kept the last message it passed (and an older one, as a session does for memory), and appended one.
    const c = createMessage("user", "Now the tests.");
    const prepared = await rebuilt.prepare([a, b, c]);
    expect(prepared.projected.map((message) => message.id)).toEqual(["summary-1_message", c.id]);
  });

  it("still refuses a rewound conversation once messages are dropped from its start", async () => {
    const c = conversationBuilder().user("Start.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      retainEntries: "context",
    });
    c.tool("Bash", { command: "ls" }, "a b");
    await manager.prepare(c.messages);
    const passed = c.messages.at(-1)!;
    c.tool("Bash", { command: "pwd" }, "/tmp");
    // The last message passed, and what came after: accepted.
    await manager.prepare(c.messages.slice(c.messages.indexOf(passed)));
    // Without it (the conversation was rewound or rewritten): refused, naming the missing message.
    const last = c.messages.at(-1)!.id;
    await expect(manager.prepare([c.messages[0]!])).rejects.toThrow(InvalidOperationError);
    await expect(manager.prepare([c.messages[0]!])).rejects.toThrow(last);
  });
});

/** Where the caller's messages after the kept ones start in the whole list. */
function indexAfter(messages: readonly Message[], kept: readonly Message[]): number {
  const last = kept.at(-1)!.id;
  return messages.findIndex((message) => message.id === last) + 1;
}
