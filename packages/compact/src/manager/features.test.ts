import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createMessage,
  createUsage,
  type Message,
  normalizeContent,
  PromptTooLongError,
  type SessionMemoryNotes,
  type SessionMemorySource,
  type ToolContext,
} from "@unforget/core";
import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { sampleCorpus } from "@unforget/testing/corpus";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { createCacheBreakDetector } from "../cache/cache-break-detector.ts";
import { sessionMemoryCompact } from "../layers/session-memory-compact.ts";
import { compactConversation } from "../summary/compact-conversation.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import { createModelSummarizer } from "../summary/model-summarizer.ts";
import { createRecentFilesProvider, createTodosProvider } from "../summary/rehydration.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import { SUMMARY_SECTIONS } from "../summary/summary-format.ts";
import { createContextManager } from "./context-manager.ts";
import { createCompactTool, createSnipTool } from "./context-tools.ts";
import {
  billedInputTokens,
  buildContextManagement,
  getServerCompaction,
  onDemandCompactionOptions,
  portableMessages,
} from "./native-context.ts";

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };
/** What a session hands a tool; these tools use none of it. */
const toolContext: ToolContext = {
  signal: new AbortController().signal,
  sessionId: "session",
  toolUseId: "toolu_1",
  cwd: process.cwd(),
  sessionState: new Map(),
};

/** Session notes kept in a real file, the way a memory package keeps them. */
function fileNotes(path: string, lastSummarizedMessageId?: string): SessionMemorySource {
  return {
    async waitForPendingExtraction() {},
    async readNotes(): Promise<SessionMemoryNotes | undefined> {
      const text = await readFile(path, "utf8").catch(() => "");
      if (text.trim().length === 0) return undefined;
      return { text, path, ...(lastSummarizedMessageId ? { lastSummarizedMessageId } : {}) };
    },
  };
}

describe("session-memory compaction", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-notes-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("uses the notes instead of a model, keeps the messages after the last one they cover, and is rejected when it would not fit", async () => {
    const c = conversationBuilder().user("Refactor the cache.");
    for (let index = 0; index < 30; index++) c.tool("Task", { description: `${index}` }, filler(600, index));
    const path = join(dir, "notes.md");
    await writeFile(path, "# Session Title\nCache refactor\n# Current State\nHalf done.\n");
    const covered = c.messages[40]!.id;
    const outcome = await sessionMemoryCompact(c.messages, {
      source: fileNotes(path, covered),
      threshold: 20_000,
      keep: { minTokens: 2_000, maxTokens: 6_000, minTextMessages: 1 },
    });
    expect(outcome?.summarizer.name).toBe("session-memory");
    expect(outcome?.messageText).toContain("Cache refactor");
    // The notes do not quote the user's request, so the compaction carries it.
    expect(outcome?.messageText).toContain(
      `<user-message id="${c.messages[0]!.id}:0">\nRefactor the cache.\n</user-message>`,
    );
    expect(outcome?.keptMessageIds[0]).toBe(c.messages[41]!.id);
    expect(
      await sessionMemoryCompact(c.messages, { source: fileNotes(path, covered), threshold: 500 }),
    ).toBeUndefined();
    await writeFile(path, "");
    expect(
      await sessionMemoryCompact(c.messages, { source: fileNotes(path, covered), threshold: 20_000 }),
    ).toBeUndefined();
  });

  it("is what the manager tries first at the threshold", async () => {
    const path = join(dir, "notes.md");
    await writeFile(path, "# Current State\nWorking on the cache layer; tests pass.\n");
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      sessionMemory: fileNotes(path),
      config: { earlyMark: false },
    });
    for (let turn = 0; manager.status().compactions === 0 && turn < 80; turn++) {
      c.tool("Task", { description: `${turn}` }, filler(1_500, turn));
      const result = await manager.prepare(c.messages);
      if (result.actions.some((action) => action.layer === "session-memory")) {
        expect(JSON.stringify(result.messages)).toContain("Working on the cache layer");
      }
    }
    expect(
      manager.entries.some((entry) => entry.type === "compact_boundary" && entry.layer === "session-memory"),
    ).toBe(true);
  });
});

describe("manager details", () => {
  it("compacts at a per-model threshold and never from a compaction's own call", async () => {
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "small-model",
      limits: LIMITS,
      clock: c.now,
      config: { thresholds: { "small-model": { tokens: 8_000 } } },
    });
    expect(manager.status().threshold).toBe(8_000);
    for (let turn = 0; turn < 8; turn++) c.tool("Task", { description: `${turn}` }, filler(1_500, turn));
    const inside = await manager.prepare(c.messages, { querySource: "compact" });
    expect(inside.actions).toEqual([]);
    const outside = await manager.prepare(c.messages);
    expect(outside.actions.map((action) => action.layer)).toContain("summary");
  });

  it("learns the window a refusal states, from recover() and from the summariser, with no provider to ask", async () => {
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 6; turn++) c.tool("Task", { description: `${turn}` }, filler(1_500, turn));
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await manager.prepare(c.messages);
    const refusal = new PromptTooLongError("prompt is too long: 12000 tokens > 9000 maximum", {
      providerId: "host",
      actualTokens: 12_000,
      limitTokens: 9_000,
    });
    await manager.recover(refusal).catch(() => undefined);
    expect(manager.status().contextWindow).toBe(9_000);
    // A summariser refused in the same words (a host's own model): its window is learned as well.
    let refused = false;
    const summarizer: Summarizer = {
      name: "model",
      boundedByModelWindow: true,
      async summarize(request) {
        if (refused) return createExtractiveSummarizer().summarize(request);
        refused = true;
        throw new PromptTooLongError("prompt is too long: 70000 tokens > 45000 maximum", {
          providerId: "host",
          actualTokens: 70_000,
          limitTokens: 45_000,
        });
      },
    };
    const other = createContextManager({ model: "m", limits: LIMITS, clock: c.now, summarizer });
    await other.compact(c.messages);
    expect(refused).toBe(true);
    expect(other.status().contextWindow).toBe(45_000);
  });

  it("re-appends session metadata and records the offered tools on each boundary", async () => {
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { earlyMark: false },
    });
    await manager.recordMetadata({ title: "Cache refactor", tags: ["perf"] });
    for (let turn = 0; manager.status().compactions === 0 && turn < 60; turn++) {
      c.tool("Task", { description: `${turn}` }, filler(1_500, turn));
      await manager.prepare(c.messages, { tools: [{ name: "Task", inputSchema: { type: "object" } }] });
    }
    const boundary = manager.entries.findIndex((entry) => entry.type === "compact_boundary");
    const boundaryEntry = manager.entries[boundary];
    expect(boundaryEntry?.type === "compact_boundary" && boundaryEntry.discoveredTools).toEqual(["Task"]);
    expect(
      manager.entries
        .slice(boundary)
        .some((entry) => entry.type === "metadata" && entry.title === "Cache refactor"),
    ).toBe(true);
  });

  it("gives the model compact and snip tools that schedule the work for the next call", async () => {
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 30; turn++) c.tool("Task", { description: `${turn}` }, filler(400, turn));
    const snipping = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await snipping.prepare(c.messages);
    const snip = createSnipTool(snipping);
    expect((await snip.execute({ keep_recent_messages: 1 }, toolContext)).isError).toBe(true);
    expect((await snip.execute({ keep_recent_messages: 10 }, toolContext)).isError).toBe(false);
    const snipped = await snipping.prepare(c.messages);
    expect(snipped.actions.map((action) => action.layer)).toEqual(["snip"]);
    expect(snipped.projected.length).toBeLessThanOrEqual(12);

    const compacting = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await compacting.prepare(c.messages);
    const compact = createCompactTool(compacting);
    expect((await compact.execute({ instructions: 42 }, toolContext)).isError).toBe(true);
    expect((await compact.execute({ instructions: "Keep the task list." }, toolContext)).isError).toBe(false);
    const compacted = await compacting.prepare(c.messages);
    expect(compacted.actions.map((action) => [action.layer, action.trigger])).toEqual([
      ["summary", "manual"],
    ]);
    expect(JSON.stringify(compacted.messages)).toContain("Keep the task list.");
  });

  it("restores the files read most recently, fresh from disk, and the open todo list", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-files-"));
    try {
      await writeFile(join(dir, "a.ts"), "export const a = 2; // changed since it was read");
      await writeFile(join(dir, "CLAUDE.md"), "rules");
      const c = conversationBuilder().user("Go.");
      c.tool("Read", { file_path: "a.ts" }, "export const a = 1;");
      c.tool("Read", { file_path: "CLAUDE.md" }, "rules");
      c.tool("Read", { file_path: "missing.ts" }, "gone");
      c.tool("TodoWrite", { todos: [{ content: "ship it", status: "pending" }] }, "ok");
      const context = { trigger: "auto" as const, summarized: c.messages, kept: [], budgetTokens: 10_000 };
      const files = await createRecentFilesProvider({ root: dir }).provide(context);
      expect(files.map((file) => file.content)).toEqual([
        expect.stringContaining("export const a = 2; // changed since it was read"),
      ]);
      const todos = await createTodosProvider().provide(context);
      expect(todos[0]?.content).toContain("[pending] ship it");

      // Sources that outlive compactions (the tools' read state and todo list): after a second compaction the
      // summarised messages hold neither the Read nor the TodoWrite call.
      const later = { trigger: "auto" as const, summarized: [], kept: [], budgetTokens: 10_000 };
      expect(await createRecentFilesProvider({ root: dir }).provide(later)).toEqual([]);
      const fromState = await createRecentFilesProvider({
        root: dir,
        recentPaths: () => [join(dir, "a.ts"), join(dir, "CLAUDE.md")],
      }).provide(later);
      expect(fromState.map((file) => file.source)).toEqual([join(dir, "a.ts")]);
      const state = [{ content: "ship it", status: "in_progress" }];
      expect(await createTodosProvider().provide(later)).toEqual([]);
      const restored = await createTodosProvider({ todos: () => state }).provide(later);
      expect(restored[0]?.content).toContain("[in_progress] ship it");
      // A list the kept messages show is not repeated.
      const shown = conversationBuilder().user("Go.").tool("TodoWrite", { todos: state }, "ok").messages;
      expect(await createTodosProvider({ todos: () => state }).provide({ ...later, kept: shown })).toEqual(
        [],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a partial compaction keeps what is before the range in front of the summary", async () => {
    const c = conversationBuilder().user("First task: set up CI.");
    for (let turn = 0; turn < 6; turn++) c.tool("Task", { description: `${turn}` }, filler(300, turn));
    const from = c.messages.length;
    c.user("Second task: write docs.");
    for (let turn = 0; turn < 6; turn++) c.tool("Task", { description: `${turn}` }, filler(300, turn + 10));
    const outcome = await compactConversation(c.messages, {
      summarizer: createExtractiveSummarizer(),
      trigger: "manual",
      summaryMaxTokens: 2_000,
      range: { from },
    });
    expect(outcome.mode).toBe("replace");
    expect(outcome.keptMessageIds.slice(0, from)).toEqual(
      c.messages.slice(0, from).map((message) => message.id),
    );
    expect(outcome.summary).toContain("Second task: write docs.");
    expect(outcome.summary).not.toContain("First task");
  });

  it("never fails a manual compaction because the conversation is too long for the summary model", async () => {
    const nine = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n- ok`).join("\n");
    const fake = await startAnthropicFake({
      contextLimit: 30_000,
      defaultReply: { kind: "reply", text: `<summary>${nine}</summary>` },
    });
    try {
      const provider = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url });
      const c = conversationBuilder().user("Go.");
      for (let turn = 0; turn < 40; turn++) c.tool("Task", { description: `${turn}` }, filler(1_000, turn));
      const manager = createContextManager({
        model: "claude-sonnet-4-6",
        provider,
        summarizer: createModelSummarizer({ provider, model: "claude-sonnet-4-6" }),
        limits: { contextWindow: 30_000, maxOutputTokens: 4_000 },
        clock: c.now,
        config: { proactive: "off" },
      });
      const result = await manager.compact(c.messages, { instructions: "Keep the numbers." });
      expect(result.actions[0]?.layer).toBe("summary");
      // The input is summarised in pieces that fit; a piece the provider still refuses is split again.
      const calls = fake.requests.filter((request) => request.operation === "stream");
      expect(calls.length).toBeLessThanOrEqual(4);
      expect(fake.countTokens(calls.at(-1)!.body)).toBeLessThanOrEqual(30_000);
    } finally {
      await fake.close();
    }
  });
});

describe("cache and provider-native helpers", () => {
  it("detects a cache break unless a compaction explains it", () => {
    const detector = createCacheBreakDetector();
    expect(detector.observe(createUsage({ cacheReadInputTokens: 50_000 }))).toBeUndefined();
    expect(detector.observe(createUsage({ cacheReadInputTokens: 10_000 }))).toMatchObject({
      droppedTokens: 40_000,
    });
    detector.resetBaseline();
    expect(detector.observe(createUsage({ cacheReadInputTokens: 1_000 }))).toBeUndefined();
  });

  it("builds context-editing and compaction requests, and reads a provider's compaction block", async () => {
    const editing = buildContextManagement(
      { mode: "context-editing" },
      { idleMs: 2 * 3_600_000, contextWindow: 200_000, hasThinking: true },
    );
    expect(editing?.edits.map((edit) => edit.type)).toEqual([
      "clear_thinking_20251015",
      "clear_tool_uses_20250919",
    ]);
    const compaction = buildContextManagement(
      { mode: "server-compaction" },
      { idleMs: 0, contextWindow: 200_000, hasThinking: false },
    );
    expect(compaction?.edits[0]).toMatchObject({
      type: "compact_20260112",
      instructions: expect.stringContaining("Do not call any tool"),
    });
    const open: Message[] = [
      createMessage("assistant", [{ type: "tool_use", id: "t", name: "Read", input: {} }]),
    ];
    expect(() => onDemandCompactionOptions(open)).toThrow(/tool call is open/);
    expect(() => onDemandCompactionOptions([], undefined, editing)).toThrow(/cannot be combined/);

    const recorded = JSON.parse(
      await readFile(join(sampleCorpus().dir, "api-fixtures", "anthropic-compaction.sample.json"), "utf8"),
    ) as { content: unknown; usage: Record<string, unknown> };
    const content = normalizeContent(recorded.content);
    const block = getServerCompaction(content[0]!);
    expect(block?.content).toContain("Summary of Conversation");
    const portable = portableMessages([createMessage("assistant", content)]);
    expect(portable[0]?.content[0]).toMatchObject({
      type: "text",
      text: expect.stringContaining("Summary of Conversation"),
    });
    expect(
      billedInputTokens({
        ...createUsage({ inputTokens: 100 }),
        iterations: [
          {
            type: "compaction",
            inputTokens: 60_000,
            outputTokens: 900,
            cacheCreationInputTokens: 0,
            cacheReadInputTokens: 0,
          },
          {
            type: "message",
            inputTokens: 1_200,
            outputTokens: 300,
            cacheCreationInputTokens: 0,
            cacheReadInputTokens: 0,
          },
        ],
      }),
    ).toBe(61_200);
  });

  it("puts context management on the request when the provider can do it", async () => {
    const fake = await startAnthropicFake();
    try {
      const provider = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url });
      const c = conversationBuilder().user("Go.");
      const manager = createContextManager({
        model: "claude-sonnet-4-6",
        provider,
        limits: LIMITS,
        clock: c.now,
        config: { native: { mode: "context-editing" } },
      });
      const prepared = await manager.prepare(c.messages);
      expect(prepared.contextManagement?.edits[0]?.type).toBe("clear_tool_uses_20250919");
      const response = await provider.createMessage({
        model: "claude-sonnet-4-6",
        messages: prepared.messages,
        maxTokens: 100,
        contextManagement: prepared.contextManagement!,
      });
      expect(response.content.length).toBeGreaterThan(0);
      expect(fake.requests.at(-1)?.headers["anthropic-beta"]).toContain("context-management");
    } finally {
      await fake.close();
    }
  });
});
