import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message, SessionMemorySource } from "@unforget/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { clearedResultText } from "../layers/clearable-outputs.ts";
import { sessionMemoryCompact } from "../layers/session-memory-compact.ts";
import { snipCompact } from "../layers/snip-compact.ts";
import { createContextManager } from "../manager/context-manager.ts";
import { compactConversation } from "../summary/compact-conversation.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import { collectContinuation } from "./continuation.ts";
import { continuationIn, readContinuation } from "./continuation-text.ts";
import { userText } from "./conversation.ts";

/** A summariser that writes the wrong things: a stale plan, done work as pending, no errors. */
const wrong: Summarizer = {
  name: "wrong",
  async summarize() {
    const text = [
      "1. Primary Request and Intent: set up the project (the plan of an hour ago).",
      "4. Errors and Fixes: none, everything passed.",
      "7. Pending Tasks: look up rec-1; run npm test for the first time.",
      "8. Current Work: planning.",
    ].join("\n");
    return { text, inputTokens: 0, outputTokens: 0, calls: 0 };
  },
};

const LOCKED = "ERR_RECORD_LOCKED: record rec-2 is locked by job 7";
const TEST_FAIL = "FAIL src/date.test.ts > parses ISO weeks";

/** Two user turns of work: a custom tool that fails once, a test run that fails, an edit, a fixed command. */
function session() {
  const c = conversationBuilder().user("Fix the date parser and look the records up.");
  c.tool("get_record", { id: "rec-1" }, "record rec-1: ok, 3 fields");
  c.tool("get_record", { id: "rec-2" }, `${LOCKED}\n  while reading the index\nretry later`, {
    isError: true,
  });
  c.tool("Bash", { command: "npm test" }, `${TEST_FAIL}\nAssertionError: expected 52 to be 1\nExit code 1`, {
    isError: true,
  });
  c.tool("Bash", { command: "npm run lint" }, "error: lint failed\nExit code 2", { isError: true });
  c.tool(
    "Edit",
    { file_path: "src/date.ts", old_string: "a", new_string: "b" },
    "The file src/date.ts has been updated.",
  );
  c.tool("Bash", { command: "npm run lint" }, "All clean.\nExit code 0");
  for (let index = 0; index < 6; index++)
    c.tool("Read", { file_path: `src/m${index}.ts` }, filler(400, index));
  c.assistant("The lint passes; the test still fails.");
  c.user("Now update the changelog too.");
  c.tool("Read", { file_path: "CHANGELOG.md" }, filler(300, 40));
  c.tool("Read", { file_path: "docs/notes.md" }, filler(300, 41));
  return c;
}

/** The checks every removal's next request must pass, whatever the summariser wrote. */
function expectContract(request: string, replacedIds: readonly string[]): void {
  const block = continuationIn(request);
  expect(block, "the request holds a continuation").toBeDefined();
  // The open errors: tool, input, exit status, first error lines; the fixed lint failure is not among them.
  const open = readContinuation(block!)!.openErrors;
  expect(open.map((error) => [error.call, error.status])).toEqual([
    ["get_record(rec-2)", "error"],
    ["Bash(npm test)", "exit 1"],
  ]);
  expect(open[0]!.lines[0]).toBe(LOCKED);
  expect(open[1]!.lines).toContain(TEST_FAIL);
  // Done: each replaced call with its user turn, by its history id.
  const { done, earlier } = readContinuation(block!)!;
  const listed = done.flatMap((action) => (action.id ? [action.id] : []));
  expect(listed.length + earlier.count).toBe(replacedIds.length);
  expect(listed).toEqual(replacedIds.slice(replacedIds.length - listed.length));
  const older = replacedIds.slice(0, earlier.count);
  expect(earlier.ids).toEqual(older.length <= 10 ? older : [...older.slice(0, 5), ...older.slice(-5)]);
  for (const action of done) expect(action.turn, action.record).toBe(1);
  expect(done.at(-1)!.record).toMatch(/^Read\(src\/m5\.ts\) → /);
  // The latest execution point, and the last request still pending.
  expect(block).toMatch(/Latest execution point \(turn 2\): Read\(docs\/notes\.md\)/);
  expect(block).toContain("the request of turn 2 (the user's last message) is not finished");
  // The user's last message is in the request verbatim (the tail keeps it), and is not quoted twice.
  expect(request.split("Now update the changelog too.").length - 1).toBe(1);
}

const replacedCallIds = (messages: readonly Message[], removed: ReadonlySet<string>) =>
  messages.flatMap((message) =>
    removed.has(message.id) && message.role === "assistant"
      ? message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
      : [],
  );

/** The calls of the session a summary replaced: all but the newest turn's. */
const firstTurnCallIds = (messages: readonly Message[]) => {
  const newest = messages.findLastIndex(
    (message) => message.role === "user" && userText(message).startsWith("Now"),
  );
  return replacedCallIds(messages.slice(0, newest), new Set(messages.map((message) => message.id)));
};

describe("the continuation contract", () => {
  it.each([
    ["a summariser that writes the wrong things", wrong],
    ["the offline summariser", createExtractiveSummarizer()],
  ])("the next request after a summary by %s holds each part", async (_name, summarizer) => {
    const c = session();
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 32_000, maxOutputTokens: 2_000 },
      summarizer,
      fallbackSummarizer: summarizer,
    });
    const result = await manager.compact(c.messages);
    expect(result.actions[0]?.layer).toBe("summary");
    const request = JSON.stringify(result.messages);
    const first = result.messages[0]!.content;
    const summary =
      typeof first === "string"
        ? first
        : first.map((block) => (block.type === "text" ? block.text : "")).join("\n");
    expect(summary).toContain("It replaced 12 tool calls");
    expectContract(summary, firstTurnCallIds(c.messages));
    expect(request).toContain("Now update the changelog too.");
  });

  it("a snip placeholder holds it", () => {
    const c = session();
    const result = snipCompact(c.messages, { maxMessages: 6, keepHead: 1, keepTail: 4 });
    const placeholder = result.messages.find((message) => message.metadata?.reason === "snip")!;
    const kept = new Set(result.messages.map((message) => message.id));
    const removed = new Set(
      c.messages.filter((message) => !kept.has(message.id)).map((message) => message.id),
    );
    expectContract(userText(placeholder), replacedCallIds(c.messages, removed));
  });

  describe("session-memory compaction", () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "unforget-continuation-"));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("holds it beside notes that say the wrong things", async () => {
      const c = session();
      const path = join(dir, "notes.md");
      await writeFile(path, "# Current State\nSetting up. No errors so far. Next: run npm test.\n");
      const covered = c.messages.at(-5)!.id;
      const source: SessionMemorySource = {
        async waitForPendingExtraction() {},
        async readNotes() {
          return {
            text: "# Current State\nSetting up. No errors so far.\n",
            path,
            lastSummarizedMessageId: covered,
          };
        },
      };
      const outcome = await sessionMemoryCompact(c.messages, {
        source,
        threshold: 20_000,
        keep: { minTokens: 0, maxTokens: 1_000, minTextMessages: 1 },
      });
      const removed = new Set(outcome!.summarizedMessageIds);
      expectContract(
        `${outcome!.messageText}\n${c.messages
          .filter((message) => !removed.has(message.id))
          .map(userText)
          .join("\n")}`,
        replacedCallIds(c.messages, removed),
      );
    });
  });

  it("carries open errors and done actions through a second summary, and closes an error a later run fixed", async () => {
    const c = session();
    const first = await compactConversation(c.messages, {
      summarizer: wrong,
      trigger: "manual",
      summaryMaxTokens: 4_000,
    });
    const kept = new Set(first.keptMessageIds);
    const opening: Message = {
      ...c.messages[0]!,
      id: "summary_1",
      content: [{ type: "text", text: first.messageText }],
      isMeta: true,
      isCompactSummary: true,
    };
    const start = c.messages.length;
    c.user("Run the tests again.");
    c.tool("Bash", { command: "npm test" }, "Tests 40 passed\nExit code 0");
    c.tool("Read", { file_path: "lib/x.ts" }, filler(1_200, 1));
    c.user("Then stop.");
    c.tool("Read", { file_path: "README.md" }, filler(200, 9));
    const messages = [
      opening,
      ...c.messages.filter((message, index) => kept.has(message.id) || index >= start),
    ];
    const second = await compactConversation(messages, {
      summarizer: wrong,
      trigger: "manual",
      summaryMaxTokens: 4_000,
    });
    const carried = readContinuation(continuationIn(second.messageText)!)!;
    // The lookup still fails; the test run passed since, so its failure is closed.
    expect(carried.openErrors.map((error) => error.call)).toEqual(["get_record(rec-2)"]);
    expect(carried.openErrors[0]!.lines[0]).toBe(LOCKED);
    // The first summary's done actions are carried on (listed or counted), with their turns.
    const all = carried.done.length + carried.earlier.count;
    expect(all).toBeGreaterThanOrEqual(13);
    expect(carried.done.some((action) => action.record.startsWith("Bash(npm test) → Tests 40 passed"))).toBe(
      true,
    );
    expect(carried.done.find((action) => action.record.startsWith("Bash(npm test) → Tests"))?.turn).toBe(3);
  });

  it("quotes the user's last message only when nothing else carries it whole", () => {
    const c = conversationBuilder().user("First.");
    c.tool("Read", { file_path: "a.ts" }, "x");
    c.user("Second, the one to finish.");
    c.tool("Read", { file_path: "b.ts" }, "y");
    const replaced = c.messages.slice(0, 4);
    expect(collectContinuation(replaced, []).lastUser).toEqual({
      turn: 2,
      text: "Second, the one to finish.",
    });
    expect(
      collectContinuation(replaced, [], { carriedVerbatim: ["First.", "Second, the one to finish."] })
        .lastUser,
    ).toBeUndefined();
    expect(collectContinuation(c.messages.slice(0, 2), c.messages.slice(2)).lastUser).toBeUndefined();
  });

  it("recognises a failure by its exit status when the result is not marked as an error, and by a cleared output's record", () => {
    const c = conversationBuilder().user("Build.");
    c.tool(
      "run_build",
      { target: "web" },
      "compiling…\nsrc/a.ts(3,5): error TS2345: bad\n[The command completed with exit code 2.]",
    );
    c.tool(
      "Bash",
      { command: "make" },
      clearedResultText("Bash(make) → exit 2: error: no rule to make target (4 lines)", "toolu_9"),
    );
    c.tool("Read", { file_path: "z.ts" }, "ok");
    const open = collectContinuation(c.messages, []).openErrors;
    expect(open).toEqual([
      expect.objectContaining({
        call: "run_build(web)",
        status: "exit 2",
        lines: ["src/a.ts(3,5): error TS2345: bad"],
      }),
      expect.objectContaining({
        call: "Bash(make)",
        status: "exit 2",
        lines: ["error: no rule to make target"],
      }),
    ]);
  });
});
