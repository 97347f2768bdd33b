import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { CompactionFailedError } from "../compact-error.ts";
import { estimateTextTokens } from "../conversation/conversation.ts";
import { SUMMARY_MAX_PIECES } from "../defaults.ts";
import { compactConversation } from "./compact-conversation.ts";
import { createExtractiveSummarizer } from "./extractive-summarizer.ts";
import { createModelSummarizer } from "./model-summarizer.ts";
import {
  formatSummaryReply,
  missingSections,
  parseSummarySections,
  SUMMARY_SECTIONS,
} from "./summary-format.ts";

const NINE = SUMMARY_SECTIONS.map(
  (title, index) => `${index + 1}. ${title}:\n- something about ${title}`,
).join("\n\n");

function session() {
  const c = conversationBuilder().user("Fix the date parser in src/date.ts; keep the public API unchanged.");
  c.tool(
    "Read",
    { file_path: "src/date.ts" },
    "export function parse(s: string) {\n  return new Date(s);\n}",
  );
  c.tool("Bash", { command: "npm test" }, "FAIL src/date.test.ts\nError: expected 2024-01-01", {
    isError: true,
  });
  c.tool("Edit", { file_path: "src/date.ts", old_string: "new Date(s)", new_string: "parseIso(s)" }, "ok");
  c.tool(
    "TodoWrite",
    {
      todos: [
        { content: "Fix parser", status: "completed" },
        { content: "Add a test for leap years", status: "in_progress" },
      ],
    },
    "ok",
  );
  c.user("Also: always use pnpm, never npm.");
  c.assistant("I switched to pnpm. The parser now uses parseIso.");
  return c;
}

describe("summary format", () => {
  it("finds missing sections whatever the heading style and strips the analysis scratchpad", () => {
    expect(missingSections(NINE)).toEqual([]);
    expect(missingSections("## 1. Primary Request and Intent\nx")).toHaveLength(8);
    expect(formatSummaryReply("<analysis>thinking…</analysis>\n<summary>\nkept\n</summary>")).toBe("kept");
    expect(formatSummaryReply("plain reply")).toBe("plain reply");
  });
});

describe("createExtractiveSummarizer", () => {
  it("fills the nine sections from the conversation's structure, with every user message verbatim", async () => {
    const c = session();
    const { text, calls } = await createExtractiveSummarizer().summarize({
      messages: c.messages,
      scope: "all",
      maxTokens: 4_000,
    });
    expect(calls).toBe(0);
    expect(missingSections(text)).toEqual([]);
    const sections = parseSummarySections(text);
    expect(sections.get("All User Messages")).toContain(
      '"Fix the date parser in src/date.ts; keep the public API unchanged."',
    );
    expect(sections.get("All User Messages")).toContain('"Also: always use pnpm, never npm."');
    expect(sections.get("Files and Code Sections")).toContain("src/date.ts — edited 1×, read 1×");
    expect(sections.get("Errors and Fixes")).toContain("Bash(npm test)");
    expect(sections.get("Pending Tasks")).toContain("[in_progress] Add a test for leap years");
    expect(sections.get("Optional Next Step")).toContain("Add a test for leap years");
    expect(sections.get("Key Technical Concepts")).toContain("TypeScript");
  });

  it("is deterministic and merges into the previous summary instead of summarising it", async () => {
    const summarizer = createExtractiveSummarizer();
    const first = await summarizer.summarize({
      messages: session().messages,
      scope: "all",
      maxTokens: 4_000,
    });
    const again = await summarizer.summarize({
      messages: session().messages,
      scope: "all",
      maxTokens: 4_000,
    });
    expect(again.text).toBe(first.text);
    const later = conversationBuilder().user("Now document the change in README.md.");
    later.tool("Edit", { file_path: "README.md", old_string: "a", new_string: "b" }, "ok");
    const merged = await summarizer.summarize({
      messages: later.messages,
      scope: "all",
      maxTokens: 4_000,
      previousSummary: first.text,
    });
    const sections = parseSummarySections(merged.text);
    expect(sections.get("All User Messages")).toContain("always use pnpm");
    expect(sections.get("All User Messages")).toContain("Now document the change");
    expect(sections.get("Files and Code Sections")).toContain("src/date.ts");
    expect(sections.get("Files and Code Sections")).toContain("README.md");
    expect(sections.get("Primary Request and Intent")).toContain("Fix the date parser");
  });

  it("shrinks to its token budget", async () => {
    const c = conversationBuilder().user("start");
    for (let index = 0; index < 60; index++)
      c.tool("Read", { file_path: `src/file${index}.ts` }, filler(50, index));
    const { text } = await createExtractiveSummarizer().summarize({
      messages: c.messages,
      scope: "all",
      maxTokens: 700,
    });
    expect(estimateTextTokens(text)).toBeLessThanOrEqual(700);
    expect(missingSections(text)).toEqual([]);
  });
});

describe("createModelSummarizer (real Anthropic SDK against the fake)", () => {
  let fake: AnthropicFakeServer;
  beforeAll(async () => {
    fake = await startAnthropicFake();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.setContextLimit(undefined);
  });
  const provider = () =>
    createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url, initialRetryDelayMs: 1 });
  const body = (index: number) =>
    fake.requests.filter((request) => request.operation !== "count_tokens")[index]?.body as Record<
      string,
      unknown
    >;

  it("forks the session's request (same system and tools) and keeps only the summary", async () => {
    fake.enqueue({ kind: "reply", text: `<analysis>scratch</analysis>\n<summary>\n${NINE}\n</summary>` });
    const summarizer = createModelSummarizer({ provider: provider(), model: "claude-sonnet-4-6" });
    const tools = [{ name: "Read", description: "read", inputSchema: { type: "object" } }];
    const result = await summarizer.summarize({
      messages: session().messages,
      scope: "all",
      maxTokens: 4_000,
      instructions: "Focus on the parser.",
      cacheSafe: { system: "You are a coding agent.", tools, maxTokens: 8_000 },
    });
    expect(result.text).toBe(NINE);
    expect(result.calls).toBe(1);
    const sent = body(0);
    expect(sent.system).toBe("You are a coding agent.");
    expect(sent.max_tokens).toBe(8_000);
    expect((sent.tools as unknown[]).length).toBe(1);
    const messages = sent.messages as { role: string; content: { type: string; text?: string }[] }[];
    const prompt = messages.at(-1)!.content.at(-1)!.text!;
    expect(prompt.startsWith("IMPORTANT: answer with plain text only")).toBe(true);
    expect(prompt.trimEnd().endsWith("an <analysis> block followed by a <summary> block.")).toBe(true);
    expect(prompt.indexOf("Focus on the parser.")).toBeGreaterThan(prompt.indexOf("Optional Next Step"));
  });

  it("falls back to a plain call when the fork answers with a tool call, and reminds once about missing sections", async () => {
    fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Read", input: { file_path: "x" } }] },
      { kind: "reply", text: "<summary>\n1. Primary Request and Intent:\n- only this\n</summary>" },
      { kind: "reply", text: `<summary>\n${NINE}\n</summary>` },
    );
    const summarizer = createModelSummarizer({ provider: provider(), model: "claude-sonnet-4-6" });
    const result = await summarizer.summarize({
      messages: session().messages,
      scope: "all",
      maxTokens: 4_000,
      cacheSafe: { system: "sys", tools: [{ name: "Read", inputSchema: { type: "object" } }] },
    });
    expect(result.text).toBe(NINE);
    expect(result.calls).toBe(3);
    expect(body(1).tools).toBeUndefined();
    expect(body(1).max_tokens).toBe(20_000);
    const reminder = (body(2).messages as { content: { text?: string }[] }[]).at(-1)!.content.at(-1)!.text!;
    expect(reminder).toContain("missing these sections: Key Technical Concepts");
  });

  it("fails the compaction when the sections are still missing after the reminder", async () => {
    fake.enqueue(
      { kind: "reply", text: "<summary>nothing useful</summary>" },
      { kind: "reply", text: "<summary>still nothing</summary>" },
    );
    const summarizer = createModelSummarizer({ provider: provider(), model: "claude-sonnet-4-6" });
    await expect(
      summarizer.summarize({ messages: session().messages, scope: "all", maxTokens: 4_000 }),
    ).rejects.toBeInstanceOf(CompactionFailedError);
  });

  it("splits a piece the model refuses as too long, so no round is left out and the user's words are carried", async () => {
    const c = conversationBuilder().user("The original task: migrate the build to turbo.");
    for (let index = 0; index < 12; index++)
      c.tool("Read", { file_path: `f${index}.ts` }, filler(400, index));
    c.user("latest request");
    // A fake whose every answer is a good summary, and whose window is small: a request over it is refused.
    const small = await startAnthropicFake({
      contextLimit: 3_000,
      defaultReply: { kind: "reply", text: `<summary>\n${NINE}\n</summary>` },
    });
    try {
      const outcome = await compactConversation(c.messages, {
        summarizer: createModelSummarizer({
          provider: createAnthropicProvider({
            apiKey: "sk-ant-test",
            baseURL: small.url,
            initialRetryDelayMs: 1,
          }),
          model: "claude-sonnet-4-6",
        }),
        trigger: "auto",
        summaryMaxTokens: 2_000,
      });
      expect(outcome.ptlRetries).toBeGreaterThan(0);
      expect(outcome.pieces).toBeGreaterThan(1);
      const answered = small.requests.filter((request) => request.operation === "stream");
      // Every round reached a request that fitted.
      const fitted = answered.filter((request) => small.countTokens(request.body) <= 3_000);
      for (let index = 0; index < 12; index++) {
        expect(fitted.some((request) => JSON.stringify(request.body).includes(`f${index}.ts`))).toBe(true);
      }
      expect(outcome.summary).toBe(NINE);
      expect(outcome.messageText).toContain("The original task: migrate the build to turbo.");
    } finally {
      await small.close();
    }
  });
});

/** A model that writes what it sees: every error code in its input (the previous summary included) goes into Errors and Fixes. */
function diligentModel(request: { body: unknown }) {
  const codes = [...new Set(JSON.stringify(request.body).match(/ERR_CODE_\d+/g) ?? [])];
  const sections = SUMMARY_SECTIONS.map((title, index) =>
    title === "Errors and Fixes"
      ? `${index + 1}. ${title}:\n${codes.map((code) => `- ${code}`).join("\n") || "- none"}`
      : `${index + 1}. ${title}:\n- noted`,
  );
  return { kind: "reply" as const, text: `<summary>\n${sections.join("\n\n")}\n</summary>` };
}

describe("summaries of an input that does not fit the summariser's window", () => {
  let fake: AnthropicFakeServer;
  beforeAll(async () => {
    fake = await startAnthropicFake({ respond: diligentModel });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  /** Thirty rounds, every third one a failing test run with its own error code. */
  function failingSession() {
    const c = conversationBuilder().user("Make the test suite pass.");
    for (let index = 0; index < 30; index++) {
      if (index % 3 === 0) {
        c.tool(
          "Bash",
          { command: `npm test -- part${index}` },
          `FAIL part${index}\nError: ERR_CODE_${index} timed out\nExit code 1.`,
          {
            isError: true,
          },
        );
      } else {
        c.tool("Read", { file_path: `src/part${index}.js` }, filler(300, index));
      }
    }
    c.user("Keep going.");
    return c;
  }
  const codes = Array.from({ length: 10 }, (_, index) => `ERR_CODE_${index * 3}`);
  const summarizer = () =>
    createModelSummarizer({
      provider: createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url, initialRetryDelayMs: 1 }),
      model: "claude-sonnet-4-6",
    });

  it("summarises in pieces, each with the summary of the ones before it, so errors in the oldest rounds reach the summary", async () => {
    const outcome = await compactConversation(failingSession().messages, {
      summarizer: summarizer(),
      trigger: "auto",
      summaryMaxTokens: 2_000,
      maxInputTokens: 4_000,
    });
    expect(outcome.pieces).toBeGreaterThan(1);
    expect(outcome.pieces).toBeLessThanOrEqual(SUMMARY_MAX_PIECES);
    const errors = parseSummarySections(outcome.summary).get("Errors and Fixes") ?? "";
    for (const code of codes) expect(errors).toContain(code);
    // Each request fits what the caller allowed (the prompt and the previous summary come on top).
    const streams = fake.requests.filter((request) => request.operation === "stream");
    expect(streams).toHaveLength(outcome.pieces);
  });

  it("bounds the model calls: beyond four pieces the oldest go to the offline extractor, and still reach the summary", async () => {
    const outcome = await compactConversation(failingSession().messages, {
      summarizer: summarizer(),
      trigger: "auto",
      summaryMaxTokens: 2_000,
      maxInputTokens: 1_200,
    });
    const streams = fake.requests.filter((request) => request.operation === "stream");
    expect(streams).toHaveLength(SUMMARY_MAX_PIECES);
    expect(outcome.pieces).toBe(SUMMARY_MAX_PIECES + 1);
    const errors = parseSummarySections(outcome.summary).get("Errors and Fixes") ?? "";
    for (const code of codes) expect(errors).toContain(code);
  });

  it("the offline summariser, which reads everything, keeps the same errors", async () => {
    const outcome = await compactConversation(failingSession().messages, {
      summarizer: createExtractiveSummarizer(),
      trigger: "auto",
      summaryMaxTokens: 2_000,
    });
    const errors = parseSummarySections(outcome.summary).get("Errors and Fixes") ?? "";
    for (const code of codes) expect(errors).toContain(code);
  });
});
