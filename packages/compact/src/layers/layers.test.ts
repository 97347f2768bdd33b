import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findToolPairViolations, type Message } from "@unforget/core";
import { toRequestMessages } from "@unforget/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { estimateTokens, resultText } from "../conversation/conversation.ts";
import { calculateKeepStart } from "../conversation/keep-window.ts";
import { createContextManager } from "../manager/context-manager.ts";
import { truncateMiddle } from "../tool-outputs/middle-out.ts";
import {
  describeOutcome,
  findErrorLines,
  findExitStatus,
  toolOutputRecord,
} from "../tool-outputs/tool-output-record.ts";
import { isClearedResult } from "./clearable-outputs.ts";
import { collapseContext } from "./collapse-context.ts";
import { microcompact } from "./microcompact.ts";
import { maskObservations } from "./observation-masking.ts";
import { createSnipLayer, snipCompact } from "./snip-compact.ts";
import { applyToolResultBudget } from "./tool-result-budget.ts";

const results = (messages: readonly Message[]) =>
  messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "tool_result" ? [resultText(block)] : [])),
  );

describe("applyToolResultBudget", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-budget-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("saves an output over the per-result limit byte for byte before the marker points at it", async () => {
    const big = `${"line of build output\n".repeat(5_000)}DONE`;
    const c = conversationBuilder().user("build it").tool("Bash", { command: "make" }, big);
    const result = await applyToolResultBudget(c.messages, { sessionDir: dir, maxResultChars: 10_000 });
    const marker = results(result.messages)[0]!;
    expect(marker).toMatch(/^<persisted-output path="/);
    const path = result.edits[0]?.details.path as string;
    expect(path).toBe(
      join(
        dir,
        "tool-results",
        c.messages[1]!.content[0]!.type === "tool_use"
          ? (c.messages[1]!.content[0] as { id: string }).id
          : "",
      ),
    );
    expect(await readFile(path, "utf8")).toBe(big);
    expect(marker).toContain(big.slice(0, 2_000));
    expect(marker.length).toBeLessThan(3_000);
    expect(result.tokensFreed).toBeGreaterThan(20_000);
    expect(result.stats.persisted).toBe(1);
    // Idempotent: the marker is under every limit.
    const again = await applyToolResultBudget(result.messages, { sessionDir: dir, maxResultChars: 10_000 });
    expect(again.edits).toEqual([]);
  });

  it("persists the largest results of one message first until the message fits its budget", async () => {
    const c = conversationBuilder().user("read three");
    const sizes = [30_000, 90_000, 60_000];
    const ids = sizes.map((_, index) => `toolu_${index}`);
    c.messages.push({
      id: "a1",
      role: "assistant",
      timestamp: "2026-01-01T00:00:01.000Z",
      content: ids.map((id) => ({ type: "tool_use", id, name: "Read", input: { file_path: `${id}.txt` } })),
    });
    c.messages.push({
      id: "r1",
      role: "user",
      timestamp: "2026-01-01T00:00:02.000Z",
      content: ids.map((id, index) => ({
        type: "tool_result",
        tool_use_id: id,
        content: "x".repeat(sizes[index]!),
      })),
    });
    const result = await applyToolResultBudget(c.messages, {
      sessionDir: dir,
      maxMessageChars: 100_000,
      maxResultChars: 95_000,
    });
    expect(result.edits.map((edit) => edit.toolUseIds?.[0])).toEqual(["toolu_1"]);
    expect(findToolPairViolations(result.messages)).toEqual([]);
  });

  it("cuts the middle when there is no session folder, or for tools not worth persisting", async () => {
    const text = `HEAD\n${"filler\n".repeat(10_000)}TAIL`;
    const c = conversationBuilder().user("x").tool("Grep", { pattern: "x" }, text);
    const result = await applyToolResultBudget(c.messages, { maxResultChars: 5_000, truncateChars: 2_000 });
    const cut = results(result.messages)[0]!;
    expect(cut.startsWith("HEAD")).toBe(true);
    expect(cut.endsWith("TAIL")).toBe(true);
    expect(cut).toMatch(/characters \([\d,]+ lines\) cut from the middle/);
    expect(result.stats.truncated).toBe(1);
  });

  it("cuts a result over the cap to it, even with a session folder, keeping the first error line from the middle", async () => {
    const log = `npm test\n${"ok test passes\n".repeat(600)}TypeError: Cannot read properties of undefined (reading 'id')\n    at run (src/a.ts:3:9)\n${"ok test passes\n".repeat(600)}2 passed, 1 failed`;
    const c = conversationBuilder().user("test it").tool("Bash", { command: "npm test" }, log);
    const result = await applyToolResultBudget(c.messages, { sessionDir: dir, capChars: 8_000 });
    const cut = results(result.messages)[0]!;
    expect(cut.length).toBeLessThanOrEqual(8_000);
    expect(cut.startsWith("npm test")).toBe(true);
    expect(cut.endsWith("1 failed")).toBe(true);
    expect(cut).toContain("TypeError: Cannot read properties of undefined (reading 'id')");
    expect(result.stats).toMatchObject({ truncated: 1, persisted: 0 });
    // A result under the cap is left as it is.
    const small = conversationBuilder().user("x").tool("Bash", { command: "ls" }, "a\nb");
    expect((await applyToolResultBudget(small.messages, { capChars: 8_000 })).edits).toEqual([]);
  });
});

describe("truncateMiddle", () => {
  it("keeps head and tail and leaves short text alone", () => {
    expect(truncateMiddle("short", 100)).toBe("short");
    const cut = truncateMiddle("a".repeat(500) + "b".repeat(500), 300);
    expect(cut.length).toBeLessThanOrEqual(300);
    expect(cut.startsWith("aaa")).toBe(true);
    expect(cut.endsWith("bbb")).toBe(true);
  });
});

describe("snipCompact", () => {
  it("keeps the first 3 and the last 47 messages, quotes the user's words from the middle, never splits a pair", () => {
    const c = conversationBuilder().user("the task: fix the parser");
    for (let round = 0; round < 40; round++) {
      if (round === 10) c.user("also keep the old API working");
      c.tool("Read", { file_path: `f${round}.ts` }, filler(50, round));
    }
    expect(c.messages.length).toBeGreaterThan(50);
    const result = snipCompact(c.messages);
    expect(result.edits).toHaveLength(1);
    const placeholder = result.messages.find((message) => message.id.startsWith("snip_"))!;
    const text = placeholder.content[0]?.type === "text" ? placeholder.content[0].text : "";
    expect(text).toContain('"also keep the old API working"');
    // 3 + the placeholder + 47, plus at most one message pulled in to keep a pair whole.
    expect(result.messages.length).toBeLessThanOrEqual(52);
    expect(result.messages[0]?.id).toBe(c.messages[0]?.id);
    expect(result.messages.at(-1)?.id).toBe(c.messages.at(-1)?.id);
    expect(findToolPairViolations(toRequestMessages(result.messages) as Message[])).toEqual([]);
    expect(estimateTokens(result.messages)).toBeLessThan(estimateTokens(c.messages));
  });

  it("does nothing under the limit", () => {
    const c = conversationBuilder().user("hi").assistant("hello");
    expect(snipCompact(c.messages).edits).toEqual([]);
  });
});

describe("microcompact", () => {
  it("clears all but the 5 most recent compactable results after an idle hour, and nothing before", () => {
    const c = conversationBuilder().user("look around");
    for (let index = 0; index < 8; index++) c.tool("Read", { file_path: `f${index}.ts` }, filler(200, index));
    c.tool("AskUserQuestion", { question: "which one?" }, "the second one");
    c.assistant("done");
    expect(microcompact(c.messages, { now: c.now() + 30 * 60_000 }).edits).toEqual([]);
    const result = microcompact(c.messages, { now: c.now() + 61 * 60_000 });
    expect(result.stats.cleared).toBe(3);
    const texts = results(result.messages);
    expect(texts.filter(isClearedResult)).toHaveLength(3);
    // A cleared output keeps its one-line record: the call and what the output came to.
    expect(texts.find(isClearedResult)).toMatch(
      /^\[Old tool result content cleared \(history_read id toolu_\w+\): Read\(f0\.ts\) → .+ \(\d+ lines\)\]$/,
    );
    expect(texts).toContain("the second one");
    expect(microcompact(result.messages, { now: c.now() + 61 * 60_000 }).edits).toEqual([]);
  });

  it("prunes old outputs beyond the protected window only when that frees enough", () => {
    const c = conversationBuilder().user("go");
    for (let index = 0; index < 10; index++)
      c.tool("Bash", { command: `step ${index}` }, filler(1_000, index));
    c.user("next");
    const small = microcompact(c.messages, {
      strategy: "prune",
      protectTokens: 3_000,
      minimumFreedTokens: 50_000,
    });
    expect(small.edits).toEqual([]);
    const result = microcompact(c.messages, {
      strategy: "prune",
      protectTokens: 3_000,
      minimumFreedTokens: 2_000,
    });
    expect(result.stats.cleared).toBeGreaterThanOrEqual(5);
    expect(
      results(result.messages)
        .slice(-2)
        .every((text) => !isClearedResult(text)),
    ).toBe(true);
  });
});

describe("collapseContext", () => {
  it("folds old completed runs into one line per call and never folds the user's words", () => {
    const c = conversationBuilder().user("investigate the failure");
    for (let index = 0; index < 6; index++)
      c.tool("Read", { file_path: `src/f${index}.ts` }, `export const f${index} = 1;\n${filler(300, index)}`);
    c.user("now fix it");
    for (let index = 0; index < 5; index++)
      c.tool("Bash", { command: "npm test" }, `FAIL test ${index}\n${filler(300, index)}`, { isError: true });
    const result = collapseContext(c.messages, { protectRounds: 2 });
    const texts = result.messages.flatMap((message) =>
      message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
    );
    expect(texts).toContain("investigate the failure");
    expect(texts).toContain("now fix it");
    const records = texts.filter((text) => text.startsWith("[Earlier tool activity"));
    expect(records).toHaveLength(2);
    expect(records[0]).toContain("Read(src/f0.ts) → export const f0 = 1;");
    expect(records[1]).toContain("Bash(npm test) → error: FAIL test 0");
    expect(findToolPairViolations(toRequestMessages(result.messages) as Message[])).toEqual([]);
    expect(result.tokensFreed).toBeGreaterThan(2_000);
  });

  it("condenses a finished turn's records into a digest that keeps each failed call's error line, once", () => {
    const c = conversationBuilder().user("port the parser");
    for (let index = 0; index < 8; index++)
      c.tool("Read", { file_path: `src/p${index}.ts` }, `export const p${index} = 1;\n${filler(300, index)}`);
    c.tool("Bash", { command: "npx tsc" }, `src/p3.ts(4,1): error TS2345: bad argument\n${filler(200, 9)}`, {
      isError: true,
    });
    c.tool("Bash", { command: "npm test" }, `ok 12 tests\n${filler(200, 10)}`);
    c.assistant("Ported.");
    c.user("now the lexer");
    for (let index = 0; index < 4; index++)
      c.tool("Read", { file_path: `src/l${index}.ts` }, `export const l${index} = 1;\n${filler(300, index)}`);
    const folded = collapseContext(c.messages, { protectRounds: 2 });
    const digested = collapseContext(c.messages, { protectRounds: 2, digestFinishedTurns: true });
    const texts = (messages: readonly Message[]) =>
      messages.flatMap((message) =>
        message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
      );
    const digest = texts(digested.messages).find((text) =>
      text.startsWith("[Tool activity of a finished turn"),
    );
    expect(digest).toContain("from 10 calls");
    expect(digest).toContain("- failed: Bash(npx tsc) → ");
    expect(digest).toContain("TS2345");
    expect(digest).toContain("- last: Bash(npm test) → ok 12 tests");
    expect(digest).toContain("Read(src/p7.ts)");
    // The user's words stay; the newest turn's records are not condensed; the context is smaller still.
    expect(texts(digested.messages)).toEqual(expect.arrayContaining(["port the parser", "now the lexer"]));
    expect(texts(digested.messages).filter((text) => text.startsWith("[Earlier tool activity"))).toHaveLength(
      1,
    );
    expect(estimateTokens(digested.messages)).toBeLessThan(estimateTokens(folded.messages));
    expect(findToolPairViolations(toRequestMessages(digested.messages) as Message[])).toEqual([]);
    // Records folded by an earlier call condense the same way, and a second pass changes nothing.
    const later = collapseContext(folded.messages, { protectRounds: 2, digestFinishedTurns: true });
    expect(texts(later.messages)).toEqual(texts(digested.messages));
    expect(collapseContext(digested.messages, { protectRounds: 2, digestFinishedTurns: true }).edits).toEqual(
      [],
    );
  });

  it("folds SWE-agent observation rounds too", () => {
    const c = conversationBuilder().user("solve the issue");
    for (let index = 0; index < 6; index++)
      c.observe(`open src/f${index}.py`, `[File: src/f${index}.py]\n${filler(300, index)}`);
    const result = collapseContext(c.messages, { protectRounds: 1 });
    expect(result.stats.calls).toBe(5);
  });
});

describe("maskObservations", () => {
  it("keeps the last N outputs and stubs the rest", () => {
    const c = conversationBuilder().user("go");
    for (let index = 0; index < 14; index++) c.tool("Bash", { command: `ls ${index}` }, filler(100, index));
    const result = maskObservations(c.messages, { keepLast: 10 });
    expect(result.stats.masked).toBe(4);
    expect(results(result.messages)[0]).toMatch(/^\[Output omitted to save context: Bash\(ls 0\) → /);
    expect(maskObservations(result.messages, { keepLast: 10 }).edits).toEqual([]);
  });
});

describe("calculateKeepStart", () => {
  it("expands back to the minimums but never splits a tool pair or a split response", () => {
    const c = conversationBuilder().user("start");
    for (let index = 0; index < 10; index++) c.tool("Read", { file_path: `f${index}` }, filler(200, index));
    const start = calculateKeepStart(c.messages, { minTokens: 500, minTextMessages: 0, maxTokens: 5_000 });
    expect(c.messages[start]?.role).toBe("assistant");
    expect(start).toBeGreaterThan(0);
    // With a text message required, it reaches back to the user's words.
    expect(calculateKeepStart(c.messages, { minTokens: 500, minTextMessages: 1, maxTokens: 50_000 })).toBe(0);
    // A response split into two assistant messages (parallel calls) stays together.
    const split: Message[] = [
      { id: "u", role: "user", timestamp: "t", content: [{ type: "text", text: "go" }] },
      {
        id: "a1",
        role: "assistant",
        timestamp: "t",
        responseId: "r",
        content: [{ type: "tool_use", id: "t1", name: "Read", input: {} }],
      },
      {
        id: "r1",
        role: "user",
        timestamp: "t",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "one" }],
      },
      {
        id: "a2",
        role: "assistant",
        timestamp: "t",
        responseId: "r",
        content: [{ type: "tool_use", id: "t2", name: "Read", input: {} }],
      },
      {
        id: "r2",
        role: "user",
        timestamp: "t",
        content: [{ type: "tool_result", tool_use_id: "t2", content: "two" }],
      },
    ];
    expect(calculateKeepStart(split, { minTokens: 1, minTextMessages: 0, maxTokens: 1_000, from: 4 })).toBe(
      1,
    );
  });
});

describe("records of cleared and folded outputs", () => {
  const testRun = [
    "> vitest run",
    "",
    " ✓ src/parse.test.ts (12 tests) 40ms",
    " FAIL  src/date.test.ts > parses ISO weeks",
    "AssertionError: expected 52 to be 53",
    "    at src/date.test.ts:14:20",
    "src/date.ts(3,5): error TS2345: Argument of type 'string' is not assignable to parameter of type 'Date'.",
    ...Array.from({ length: 200 }, (_, line) => `  log line ${line}`),
    "Exit code 1",
  ].join("\n");

  it("keep the command, the exit status and the first error lines", () => {
    const record = toolOutputRecord({ name: "Bash", input: { command: "npm test" } }, testRun);
    expect(record).toMatch(/^Bash\(npm test\) → exit 1: /);
    expect(record).toContain("FAIL src/date.test.ts > parses ISO weeks");
    expect(record).toContain("AssertionError: expected 52 to be 53");
    expect(record).toContain("at src/date.test.ts:14:20");
    expect(findErrorLines(testRun, 5)).toContain(
      "src/date.ts(3,5): error TS2345: Argument of type 'string' is not assignable to parameter of type 'Date'.",
    );
    expect(record).toMatch(/\(20\d lines\)$/);
  });

  it("find the failing frame of a Python traceback, the status harnesses print, and nothing in source code", () => {
    const traceback = [
      "Traceback (most recent call last):",
      '  File "reproduce.py", line 3, in <module>',
      "    main()",
      '  File "src/fields.py", line 1466, in _deserialize',
      "    raise ValueError(msg)",
      "ValueError: Not a valid period.",
      "[The command completed with exit code 1.]",
    ].join("\n");
    expect(findErrorLines(traceback)).toEqual([
      "ValueError: Not a valid period.",
      'File "src/fields.py", line 1466, in _deserialize',
    ]);
    expect(findExitStatus(traceback)).toBe(1);
    expect(findExitStatus("<returncode>2</returncode>\n<output>…</output>")).toBe(2);
    const listing = [
      "1465:            )",
      "1466:            raise ValueError(msg)",
      "1480:        except (TypeError, ValueError) as error:",
      '    console.error("Error fetching repos:", error);',
    ].join("\n");
    expect(findErrorLines(listing)).toEqual([]);
    expect(describeOutcome("src/a.ts\nsrc/b.ts")).toBe("src/a.ts (2 lines)");
    expect(describeOutcome("npm ERR! code ELIFECYCLE", true)).toBe("error: npm ERR! code ELIFECYCLE");
  });

  it("survive clearing, masking and folding", () => {
    const c = conversationBuilder().user("Make the tests pass.");
    c.tool("Bash", { command: "npm test" }, testRun, { isError: true });
    for (let index = 0; index < 8; index++)
      c.tool("Read", { file_path: `src/f${index}.ts` }, filler(300, index));
    const kept = (messages: readonly Message[]) => JSON.stringify(messages);
    for (const result of [
      microcompact(c.messages, { now: c.now() + 2 * 3_600_000, keepRecent: 1 }),
      maskObservations(c.messages, { keepLast: 1 }),
      collapseContext(c.messages, { protectRounds: 1 }),
    ]) {
      expect(result.edits.length).toBeGreaterThan(0);
      const text = kept(result.messages);
      expect(text).not.toContain("log line 100");
      expect(text).toContain("npm test");
      expect(text).toContain("exit 1");
      expect(text).toContain("FAIL src/date.test.ts > parses ISO weeks");
      expect(text).toContain("AssertionError: expected 52 to be 53");
    }
  });
});

describe("records of outputs a layer already replaced", () => {
  const missing = "cat: src/billing/ghost-4.ts: No such file or directory";
  // A compiler diagnostic of 300-odd characters: longer than any clip of old, shorter than one line's cap.
  const longError = `src/billing/invoice-totals.ts(118,7): error TS2322: Type '{ currency: string; amount: number; lines: InvoiceLine[]; discounts: Discount[] | undefined; }' is not assignable to type 'InvoiceTotals' because property 'taxes' is missing in type '{ currency: string; amount: number; }' but required in type 'InvoiceTotals'.`;

  function failingSession() {
    const c = conversationBuilder().user("Fix the billing totals.");
    c.tool(
      "Bash",
      { command: "cat src/billing/ghost-4.ts" },
      `${missing}\n[The command completed with exit code 2.]`,
      {
        isError: true,
      },
    );
    c.tool(
      "Bash",
      { command: "npx tsc" },
      `${filler(300, 1)}\n${longError}\n${filler(300, 2)}\nExit code 2`,
      {
        isError: true,
      },
    );
    for (let index = 0; index < 6; index++)
      c.tool("Read", { file_path: `src/billing/f${index}.ts` }, filler(300, index));
    c.assistant("Found it.");
    c.user("Now the tax rules.");
    for (let index = 0; index < 3; index++)
      c.tool("Read", { file_path: `src/tax/t${index}.ts` }, filler(300, index));
    return c;
  }

  const textsOf = (messages: readonly Message[]) =>
    messages.flatMap((message) =>
      message.content.flatMap((block) =>
        block.type === "text" ? [block.text] : block.type === "tool_result" ? [resultText(block)] : [],
      ),
    );

  it("keep the first error line whole, from what the clearing recorded, when collapse folds a cleared result", () => {
    const c = failingSession();
    const cleared = microcompact(c.messages, { now: c.now() + 2 * 3_600_000, keepRecent: 1 });
    expect(cleared.stats.cleared).toBeGreaterThan(2);
    const folded = textsOf(collapseContext(cleared.messages, { protectRounds: 1 }).messages).join("\n");
    expect(folded).toContain(`- Bash(cat src/billing/ghost-4.ts) → exit 2: ${missing}`);
    expect(folded).toContain(longError);
    expect(folded).not.toContain("→ [Old tool result content cleared");
    const digest = textsOf(
      collapseContext(cleared.messages, { protectRounds: 1, digestFinishedTurns: true }).messages,
    ).find((text) => text.startsWith("[Tool activity of a finished turn"));
    expect(digest).toContain(`- failed: Bash(cat src/billing/ghost-4.ts) → exit 2: ${missing}`);
    expect(digest).toContain(`- failed: Bash(npx tsc) → exit 2: ${longError}`);
  });

  it("describe the original output, not the marker, once the budget saved it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-records-"));
    try {
      const c = conversationBuilder().user("Build it.");
      const build = `${"compiling module\n".repeat(3_000)}${longError}\n${"linking\n".repeat(3_000)}Exit code 2`;
      c.tool("Bash", { command: "make" }, build, { isError: true });
      const manager = createContextManager({
        model: "m",
        limits: { contextWindow: 60_000, maxOutputTokens: 8_000 },
        clock: c.now,
        sessionDir: dir,
      });
      const first = await manager.prepare(c.messages);
      expect(results(first.projected)[0]).toMatch(/^<persisted-output /);
      expect(results(first.projected)[0]).not.toContain("TS2322");
      for (let index = 0; index < 8; index++)
        c.tool("Read", { file_path: `f${index}.ts` }, filler(200, index));
      c.assistant("Done.");
      c.wait(2 * 3_600_000);
      c.user("Go on.");
      const later = await manager.prepare(c.messages);
      // Cleared, then folded into a digest: either way the record is the original output's.
      const context = textsOf(later.projected).join("\n");
      expect(later.actions.map((action) => action.layer)).toContain("microcompact");
      expect(context).toContain(`Bash(make) → exit 2: ${longError}`);
      expect(context).not.toContain("persisted-output");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("createSnipLayer", () => {
  it("says it acts only when asked unless snipping by size is configured", () => {
    expect(createSnipLayer().onRequestOnly).toBe(true);
    expect(createSnipLayer({ maxMessages: 40 }).onRequestOnly).toBe(false);
  });
});
