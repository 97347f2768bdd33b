import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, findToolPairViolations, type Message, PromptTooLongError } from "@unforget/core";
import { applyPlugins, createSessionHooks } from "@unforget/hooks";
import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { projectMessages, readTranscript, TranscriptWriter, toRequestMessages } from "@unforget/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { CompactionDisabledError, ContextOverflowError } from "../compact-error.ts";
import { estimateTokens, resultText } from "../conversation/conversation.ts";
import { defineLayer } from "../layers/layer.ts";
import { resultFromEdits } from "../layers/layer-result.ts";
import { createFixedLevelPolicy } from "../policy/compaction-policy.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import { createInstructionsProvider, createRecentFilesProvider } from "../summary/rehydration.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import { SUMMARY_SECTIONS } from "../summary/summary-format.ts";
import type { ContextEvent } from "./context-events.ts";
import { createContextManager } from "./context-manager.ts";

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };
const counter = () => {
  let next = 0;
  return (kind: string) => `${kind}-${++next}`;
};

/**
 * Runs an agent-like loop: each turn appends a tool round, then prepares the next request. The tool is not
 * one whose results may be cleared (a subagent's report), so the summary paths must act, not only the cheap layers.
 */
async function drive(
  turns: number,
  manager: ReturnType<typeof createContextManager>,
  c: ReturnType<typeof conversationBuilder>,
  tool = "Task",
) {
  const requests: ReturnType<typeof toRequestMessages>[] = [];
  for (let turn = 0; turn < turns; turn++) {
    if (turn % 7 === 0) c.user(`Request ${turn}: keep going with part ${turn}.`);
    c.tool(tool, { description: `part ${turn}` }, filler(1_500, turn));
    const prepared = await manager.prepare(c.messages);
    requests.push(prepared.messages);
  }
  return requests;
}

/** How many digests of finished turns the messages hold. */
const digestsIn = (messages: readonly Message[]) =>
  messages.filter((message) =>
    message.content.some(
      (block) => block.type === "text" && block.text.startsWith("[Tool activity of a finished turn"),
    ),
  ).length;

describe("createContextManager", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-manager-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a long session under its threshold offline, pair-safe, with every request of the user still present", async () => {
    const c = conversationBuilder().user("The task: port the parser. Rule: never edit generated files.");
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "test-model",
      limits: LIMITS,
      clock: c.now,
      idFactory: counter(),
      onEvent: (event) => events.push(event),
    });
    const requests = await drive(60, manager, c);
    const status = manager.status();
    expect(status.compactions).toBeGreaterThan(0);
    for (const request of requests) {
      expect(findToolPairViolations(request as Message[])).toEqual([]);
      expect(estimateTokens(request as Message[])).toBeLessThan(
        LIMITS.contextWindow - LIMITS.maxOutputTokens,
      );
    }
    const last = JSON.stringify(requests.at(-1));
    for (const message of c.messages) {
      if (message.role !== "user" || message.content[0]?.type !== "text") continue;
      const text = message.content[0].text;
      expect(last.includes(JSON.stringify(text).slice(1, -1)), text).toBe(true);
    }
    expect(
      events.some(
        (event) => event.type === "layer" && (event.layer === "summary" || event.layer === "collapse"),
      ),
    ).toBe(true);
  });

  it("writes a transcript that projects to the byte-identical request in another reader", async () => {
    const c = conversationBuilder().user("Start.");
    const path = join(dir, "session.jsonl");
    const writer = await TranscriptWriter.open(path);
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      transcript: writer,
      sessionDir: dir,
      // A subagent's reports are kept whole, so that summaries must act.
      resultRetention: { Task: "keep" },
      idFactory: counter(),
    });
    let last: ReturnType<typeof toRequestMessages> = [];
    for (let turn = 0; turn < 80; turn++) {
      c.tool(
        turn % 2 === 0 ? "Bash" : "Task",
        { command: `build ${turn}` },
        turn === 3 ? "x".repeat(80_000) : filler(1_200, turn),
      );
      last = (await manager.prepare(c.messages)).messages;
    }
    await writer.close();
    const { entries } = await readTranscript(path);
    expect(manager.status().compactions).toBeGreaterThan(0);
    expect(JSON.stringify(toRequestMessages(projectMessages(entries)))).toBe(JSON.stringify(last));
    // Resuming from the transcript gives the same context without running any layer.
    const resumed = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      resume: entries,
      idFactory: counter(),
    });
    const again = await resumed.prepare(c.messages);
    expect(again.actions).toEqual([]);
    expect(JSON.stringify(again.messages)).toBe(JSON.stringify(last));
  });

  it("re-injects project rules after every compaction: a rule given at the start reaches the model after three", async () => {
    const c = conversationBuilder().user("Begin.");
    const rule = "RULE-7: never edit generated files under dist/.";
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      idFactory: counter(),
      attachments: [createInstructionsProvider({ text: rule })],
      config: { earlyMark: false, collapse: false },
    });
    let request: ReturnType<typeof toRequestMessages> = [];
    for (let turn = 0; manager.status().compactions < 3 && turn < 200; turn++) {
      c.tool("Task", { description: `f${turn}` }, filler(2_000, turn));
      request = (await manager.prepare(c.messages)).messages;
    }
    expect(manager.status().compactions).toBe(3);
    expect(JSON.stringify(request)).toContain(rule);
  });

  it("with proactive compaction off, refuses at the blocking limit and says why", async () => {
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { proactive: "off" },
    });
    let error: unknown;
    try {
      for (let turn = 0; turn < 100; turn++) {
        c.tool("Read", { file_path: `f${turn}` }, filler(2_000, turn));
        await manager.prepare(c.messages);
      }
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CompactionDisabledError);
    expect((error as Error).message).toContain('proactive compaction is off (config.proactive = "off")');
    expect(manager.status().compactions).toBe(0);
  });

  it("recovers from a prompt-too-long error in shrinking rounds, says why when it cannot, and emergency off means off", async () => {
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 10; turn++) c.tool("Task", { description: `f${turn}` }, filler(1_000, turn));
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: c.now,
    });
    const before = await manager.prepare(c.messages);
    const overflow = new PromptTooLongError("prompt is too long: 210000 tokens > 200000 maximum", {
      actualTokens: 210_000,
      limitTokens: 200_000,
    });
    const recovered = await manager.recover(overflow);
    // Under what the provider said fits, on our count.
    expect(recovered.tokens).toBeLessThanOrEqual((before.tokens * 200) / 210);
    expect(recovered.actions.map((action) => [action.layer, action.trigger])).toContainEqual([
      "summary",
      "reactive",
    ]);
    // Each further refusal in the turn gets a smaller request, until nothing is left: then a typed error.
    let error: unknown;
    let last = recovered.tokens;
    for (let round = 0; round < 5 && error === undefined; round++) {
      try {
        const again = await manager.recover(overflow);
        expect(again.tokens).toBeLessThan(last);
        last = again.tokens;
      } catch (caught) {
        error = caught;
      }
    }
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as Error).message).toMatch(/transcript is intact/);
    const off = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { emergency: "off" },
    });
    await off.prepare(c.messages);
    await expect(off.recover(overflow)).rejects.toBeInstanceOf(CompactionDisabledError);
    // When the conversation is mostly foldable tool output, draining collapse alone is enough.
    const reads = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 10; turn++) reads.tool("Read", { file_path: `f${turn}` }, filler(1_000, turn));
    const drainOnly = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: reads.now,
    });
    await drainOnly.prepare(reads.messages);
    const drained = await drainOnly.recover(overflow);
    expect(drained.actions.map((action) => action.layer)).toEqual(["collapse"]);
  });

  it("gives each refused request its own recoveries: a long tool loop is one turn of the user's", async () => {
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: c.now,
    });
    const overflow = new PromptTooLongError("prompt is too long: 210000 tokens > 200000 maximum", {
      actualTokens: 210_000,
      limitTokens: 200_000,
    });
    // More refusals than one request may recover from, each after responses came back for the one before.
    for (let refusal = 0; refusal < 5; refusal++) {
      for (let turn = 0; turn < 10; turn++)
        c.tool("Read", { file_path: `f${refusal}-${turn}` }, filler(1_000, refusal * 10 + turn));
      const before = await manager.prepare(c.messages);
      const recovered = await manager.recover(overflow);
      expect(recovered.tokens).toBeLessThan(before.tokens);
    }
  });

  it("after an idle gap longer than the cache lives, finished turns' records condense (the break is free); not before", async () => {
    const digestsAfter = async (idleMs: number) => {
      const c = conversationBuilder().user("Port the parser.");
      const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
      for (let turn = 0; turn < 14; turn++) {
        c.tool("Read", { file_path: `src/p${turn}.ts` }, filler(800, turn));
        await manager.prepare(c.messages);
      }
      c.assistant("Ported.");
      c.wait(idleMs);
      c.user("Now the lexer.");
      return digestsIn((await manager.prepare(c.messages)).projected);
    };
    expect(await digestsAfter(6 * 60_000)).toBe(1);
    expect(await digestsAfter(60_000)).toBe(0);
  });

  it("does not condense finished turns under a pending background summary (it will stand for them)", async () => {
    const extractive = createExtractiveSummarizer();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Summarizer = {
      name: "slow",
      async summarize(request) {
        await gate;
        return extractive.summarize(request);
      },
    };
    const digestsAtColdStart = async (background: boolean) => {
      const c = conversationBuilder().user("Port the parser.");
      const events: ContextEvent[] = [];
      const manager = createContextManager({
        model: "m",
        limits: LIMITS,
        clock: c.now,
        summarizer: slow,
        onEvent: (event) => events.push(event),
        ...(background ? {} : { config: { earlyMark: false } }),
      });
      for (let turn = 0; turn < 14; turn++) {
        c.tool("Read", { file_path: `src/p${turn}.ts` }, filler(300, turn));
        await manager.prepare(c.messages);
      }
      // Reports that may not be folded, until a summary starts in the background.
      for (let turn = 0; !events.some((event) => event.type === "background-started") && turn < 40; turn++) {
        c.tool("Task", { description: `part ${turn}` }, filler(1_000, turn));
        const prepared = await manager.prepare(c.messages);
        if (!background && prepared.tokens > manager.status().threshold * 0.85) break;
      }
      expect(events.some((event) => event.type === "background-started")).toBe(background);
      c.assistant("Ported.");
      c.wait(6 * 60_000);
      c.user("Now the lexer.");
      return digestsIn((await manager.prepare(c.messages)).projected);
    };
    try {
      expect(await digestsAtColdStart(false)).toBe(1);
      expect(await digestsAtColdStart(true)).toBe(0);
    } finally {
      release();
    }
  });

  it("a manual compaction after six files were read applies: the restored files take at most half of what the summary freed", async () => {
    const c = conversationBuilder();
    const paths: string[] = [];
    for (let index = 0; index < 6; index++) {
      const path = join(dir, `file-${index}.txt`);
      await writeFile(path, filler(2_000, index));
      paths.push(path);
      c.user(`Read file ${index}.`);
      c.tool("Read", { file_path: path }, filler(2_000, index));
      c.assistant(`Read file ${index}.`);
    }
    // A summary of a model's usual length: with all five newest files restored the context would not shrink.
    const nine = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n${filler(60, index)}`).join(
      "\n",
    );
    const summarizer: Summarizer = {
      name: "model",
      summarize: async () => ({ text: nine, calls: 1, inputTokens: 1, outputTokens: 1 }),
    };
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 1_000_000, maxOutputTokens: 32_000 },
      clock: c.now,
      summarizer,
      attachments: [createRecentFilesProvider({ root: dir, recentPaths: () => [...paths].reverse() })],
    });
    const result = await manager.compact(c.messages, { instructions: "Keep the file names." });
    expect(result.declined).toBeUndefined();
    expect(result.actions.map((action) => action.layer)).toEqual(["summary"]);
    expect(result.tokens).toBeLessThan(result.tokensBefore * 0.75);
    const restored = result.projected.filter((message) =>
      message.content.some((block) => block.type === "text" && block.text.startsWith("Contents of ")),
    );
    expect(restored.length).toBeGreaterThan(0);
    expect(restored.length).toBeLessThan(5);
  });

  it("a manual compaction that would free nothing is not applied, and the result says why", async () => {
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 4; turn++) c.tool("Task", { description: `part ${turn}` }, filler(500, turn));
    const before = estimateTokens(c.messages);
    const summarizer: Summarizer = {
      name: "verbose",
      summarize: async () => ({ text: filler(before * 2, 9), calls: 1, inputTokens: 1, outputTokens: 1 }),
    };
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now, summarizer });
    const result = await manager.compact(c.messages);
    expect(result.actions).toEqual([]);
    expect(result.declined?.[0]?.layer).toBe("summary");
    const [, from, to] =
      /^The summary was not applied: the context would grow from (\d+) to about (\d+) tokens/.exec(
        result.declined?.[0]?.reason ?? "",
      ) ?? [];
    expect(Number(from)).toBe(result.tokensBefore);
    expect(Number(to)).toBeGreaterThan(result.tokensBefore);
    expect(result.projected.map((message) => message.id)).toEqual(c.messages.map((message) => message.id));
  });

  it("a preview writes the summary and measures it, and applies nothing: a compaction after it applies the same", async () => {
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 6; turn++) c.tool("Task", { description: `part ${turn}` }, filler(1_500, turn));
    c.user("Now the report.");
    const summarizer: Summarizer = {
      name: "short",
      summarize: async () => ({ text: "Six parts were audited.", calls: 1, inputTokens: 1, outputTokens: 1 }),
    };
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      summarizer,
      onEvent: (event) => events.push(event),
    });
    const entries = manager.entries.length;
    const preview = await manager.compact(c.messages, { preview: true });
    expect(preview.actions).toEqual([]);
    expect(preview.preview?.layer).toBe("summary");
    expect(preview.preview?.summary).toContain("Six parts were audited.");
    expect(preview.preview?.tokensBefore).toBe(preview.tokensBefore);
    expect(preview.preview?.tokensAfter).toBeLessThan(preview.tokensBefore);
    expect(preview.preview?.declined).toBeUndefined();
    expect(preview.tokens).toBe(preview.tokensBefore);
    expect(preview.projected.map((message) => message.id)).toEqual(c.messages.map((message) => message.id));
    // The messages were mirrored into the transcript; no compaction entry was.
    expect(manager.entries.slice(entries).every((entry) => entry.type === "message")).toBe(true);
    expect(events.filter((event) => event.type === "layer" || event.type === "layer-failed")).toEqual([]);
    const applied = await manager.compact(c.messages);
    expect(applied.actions.map((action) => action.layer)).toEqual(["summary"]);
    expect(applied.tokens).toBe(preview.preview?.tokensAfter);
  });

  it("a manual compaction of a conversation with no reply yet calls no summariser and says there is nothing to compact", async () => {
    const c = conversationBuilder().user("Hello.");
    let calls = 0;
    const summarizer: Summarizer = {
      name: "counting",
      summarize: async () => {
        calls++;
        return { text: "The user said hello.", calls: 1, inputTokens: 1, outputTokens: 1 };
      },
    };
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now, summarizer });
    const result = await manager.compact(c.messages, { instructions: "Keep it short." });
    expect(calls).toBe(0);
    expect(result.actions).toEqual([]);
    expect(result.declined).toEqual([
      {
        layer: "summary",
        reason: "There is nothing to compact yet: the conversation has no reply to summarise.",
      },
    ]);
    expect(result.projected.map((message) => message.id)).toEqual(c.messages.map((message) => message.id));
  });

  it("a declined compaction fires no SessionStart (source compact); an applied one does, once", async () => {
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 4; turn++) c.tool("Task", { description: `part ${turn}` }, filler(500, turn));
    const before = estimateTokens(c.messages);
    let verbose = true;
    const summarizer: Summarizer = {
      name: "switchable",
      summarize: async () => ({
        text: verbose ? filler(before * 2, 9) : "The user asked for four parts; all were done.",
        calls: 1,
        inputTokens: 1,
        outputTokens: 1,
      }),
    };
    const hooks = createSessionHooks({ onHookError: () => {} });
    const sources: string[] = [];
    hooks.sessionStart.tapPromise("sources", async (attachments, event) => {
      sources.push(event.source);
      return attachments;
    });
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now, summarizer, hooks });
    const declined = await manager.compact(c.messages);
    expect(declined.declined?.[0]?.layer).toBe("summary");
    expect(sources).toEqual([]);
    verbose = false;
    const applied = await manager.compact(c.messages);
    expect(applied.actions.map((action) => action.layer)).toEqual(["summary"]);
    expect(sources).toEqual(["compact"]);
  });

  it("lets a PreCompact plugin veto an automatic compaction until the blocking limit, and add instructions to a manual one", async () => {
    const c = conversationBuilder().user("Go.");
    const hooks = createSessionHooks({ onHookError: () => {} });
    let veto = true;
    applyPlugins(hooks, [
      {
        name: "policy",
        apply(bus) {
          bus.preCompact.tapPromise("policy", async (result, event) =>
            event.trigger === "auto" && veto
              ? { ...result, veto: { reason: "not during the deploy" } }
              : { ...result, instructions: `${result.instructions}\nKeep the deploy log.` },
          );
        },
      },
    ]);
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      hooks,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: { collapse: false, earlyMark: false },
    });
    const { blockingLimit } = manager.status();
    for (let turn = 0; turn < 40; turn++) {
      c.tool("Task", { description: `f${turn}` }, filler(1_500, turn));
      const prepared = await manager.prepare(c.messages);
      expect(prepared.tokens).toBeLessThanOrEqual(LIMITS.contextWindow);
    }
    expect(events.some((event) => event.type === "vetoed" && event.reason === "not during the deploy")).toBe(
      true,
    );
    // The veto holds below the blocking limit; there the summary runs anyway, and an event says so.
    const summaries = events.filter((event) => event.type === "layer" && event.layer === "summary");
    expect(summaries.length).toBeGreaterThan(0);
    for (const event of summaries)
      if (event.type === "layer") expect(event.tokensBefore).toBeGreaterThanOrEqual(blockingLimit);
    expect(events.some((event) => event.type === "veto-overridden" && event.by === "policy")).toBe(true);
    veto = false;
    const result = await manager.compact(c.messages, { instructions: "Focus on the parser." });
    expect(result.actions[0]?.trigger).toBe("manual");
    expect(JSON.stringify(result.messages)).toContain(
      "Focus requested for this summary: Focus on the parser.",
    );
  });

  it("starts the summary in the background at the early mark and swaps it in at the threshold", async () => {
    const c = conversationBuilder().user("Go.");
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: { collapse: false },
    });
    await drive(40, manager, c);
    expect(events.some((event) => event.type === "background-started")).toBe(true);
    expect(events.some((event) => event.type === "background-applied")).toBe(true);
  });

  it("uses the model summariser through the provider, reusing the request's system and tools", async () => {
    const nine = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n- noted`).join("\n");
    const fake = await startAnthropicFake({
      defaultReply: { kind: "reply", text: `<summary>${nine}</summary>` },
    });
    try {
      const provider = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url });
      const c = conversationBuilder().user("Go.");
      const manager = createContextManager({
        model: "claude-sonnet-4-6",
        provider,
        limits: LIMITS,
        clock: c.now,
        config: { collapse: false, earlyMark: false },
      });
      const tools = [{ name: "Read", inputSchema: { type: "object" } }];
      for (let turn = 0; manager.status().compactions === 0 && turn < 60; turn++) {
        c.tool("Task", { description: `f${turn}` }, filler(1_500, turn));
        await manager.prepare(c.messages, { system: "You are careful.", tools, maxTokens: 4_096 });
      }
      expect(manager.status().compactions).toBe(1);
      const summaryCall = fake.requests.find((request) => request.operation === "stream")!.body as Record<
        string,
        unknown
      >;
      expect(summaryCall.system).toBe("You are careful.");
      expect(summaryCall.max_tokens).toBe(4_096);
    } finally {
      await fake.close();
    }
  });
});

describe("createContextManager events", () => {
  it("tells PostCompact observers which layer ran, with a summary only where there is one", async () => {
    const c = conversationBuilder().user("Go.");
    const hooks = createSessionHooks({ onHookError: () => {} });
    const seen: { layer: string; summary?: string }[] = [];
    applyPlugins(hooks, [
      {
        name: "audit",
        apply(bus) {
          bus.postCompact.tapPromise("audit", async (event) => {
            seen.push({ layer: event.layer, ...(event.summary ? { summary: event.summary } : {}) });
          });
        },
      },
    ]);
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      hooks,
      clock: c.now,
      config: { earlyMark: false },
    });
    for (let turn = 0; turn < 80; turn++) {
      c.tool(
        turn % 3 === 0 ? "Read" : "Task",
        { description: `f${turn}`, file_path: `f${turn}` },
        filler(1_200, turn),
      );
      await manager.prepare(c.messages);
    }
    const layers = new Set(seen.map((event) => event.layer));
    expect(layers.has("summary")).toBe(true);
    expect(
      seen
        .filter((event) => event.layer === "summary")
        .every((event) => event.summary?.includes("## 6. All User Messages")),
    ).toBe(true);
    expect(
      seen.filter((event) => event.layer !== "summary").every((event) => event.summary === undefined),
    ).toBe(true);
    expect(manager.status().turnsUntilCompaction).toBeGreaterThanOrEqual(0);
  });
});

describe("the ladder as plug-ins", () => {
  /** A layer that strips base64 data URLs from tool output, as a user might write one. */
  const stripImages = defineLayer({
    name: "strip-data-urls",
    label: "Strip data URLs",
    color: "#0ea5e9",
    kind: "edit",
    due: (state) => (state.added > 0 ? "new tool output" : false),
    run(messages, context) {
      const edits = messages.flatMap((message) =>
        message.content.flatMap((block) =>
          block.type === "tool_result" &&
          typeof block.content === "string" &&
          block.content.includes("data:image/png;base64,")
            ? [
                {
                  kind: "replace_tool_result" as const,
                  toolUseIds: [block.tool_use_id] as [string],
                  details: {
                    content: block.content.replace(/data:image\/png;base64,[A-Za-z0-9+/=]+/g, "[image]"),
                    reason: "stripped",
                  },
                },
              ]
            : [],
        ),
      );
      return resultFromEdits(messages, edits, new Date(context.now).toISOString(), 1, {
        stripped: edits.length,
      });
    },
    describe: (report) => `Stripped ${report.stats.stripped} data URLs.`,
  });

  it("runs a user's layer in the place given, with its name, label and colour, and records its edits", async () => {
    const c = conversationBuilder().user("Look at the screenshots.");
    c.tool("Read", { file_path: "a.html" }, `<img src="data:image/png;base64,${"QUJD".repeat(2_000)}">`);
    c.tool("Read", { file_path: "b.html" }, "plain");
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: { layers: (defaults) => [stripImages, ...defaults] },
    });
    expect(manager.layers.map((layer) => layer.name)).toEqual([
      "strip-data-urls",
      "tool-result-budget",
      "microcompact",
      "snip",
      "collapse",
      "summary",
    ]);
    expect(manager.layers[0]).toMatchObject({ label: "Strip data URLs", color: "#0ea5e9" });
    c.tool("Read", { file_path: "c.html" }, "last");
    const prepared = await manager.prepare(c.messages);
    expect(prepared.actions.map((action) => action.layer)).toEqual(["strip-data-urls"]);
    expect(JSON.stringify(prepared.messages)).not.toContain("base64");
    expect(
      manager.entries.some((entry) => entry.type === "layer_decision" && entry.layer === "strip-data-urls"),
    ).toBe(true);
    expect(manager.layers[0]!.describe(prepared.actions[0]!)).toBe("Stripped 1 data URLs.");
  });

  it("refuses a layer without a kebab-case name or a colour, and two layers of one name", () => {
    expect(() => defineLayer({ ...stripImages, name: "Strip Images" })).toThrow(ConfigurationError);
    expect(() => defineLayer({ ...stripImages, color: "blue" })).toThrow(/CSS hex colour/);
    expect(() =>
      createContextManager({ model: "m", limits: LIMITS, config: { layers: [stripImages, stripImages] } }),
    ).toThrow(/Two compaction layers are named "strip-data-urls"/);
  });

  it("never lets a layer clear the newest tool result, nor grow the context", async () => {
    const clearEverything = defineLayer({
      ...stripImages,
      name: "clear-everything",
      run: (messages: readonly Message[]) => ({
        messages: [...messages],
        edits: messages.flatMap((message) =>
          message.content.flatMap((block) =>
            block.type === "tool_result"
              ? [
                  {
                    kind: "replace_tool_result" as const,
                    toolUseIds: [block.tool_use_id] as [string],
                    details: { content: "gone", reason: "x" },
                  },
                ]
              : [],
          ),
        ),
        tokensFreed: 1,
        stats: {},
      }),
    });
    const c = conversationBuilder().user("Go.");
    c.tool("Read", { file_path: "a.ts" }, filler(300, 1));
    c.tool("Read", { file_path: "b.ts" }, filler(300, 2));
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { layers: (defaults) => [clearEverything, ...defaults] },
    });
    const prepared = await manager.prepare(c.messages);
    const results = prepared.projected.flatMap((message) =>
      message.content.flatMap((block) => (block.type === "tool_result" ? [resultText(block)] : [])),
    );
    expect(results[0]).toBe("gone");
    expect(results[1]).toBe(filler(300, 2));

    const events: ContextEvent[] = [];
    const growing = defineLayer({
      ...stripImages,
      name: "grow",
      run: (messages: readonly Message[]) => ({
        messages: [...messages],
        edits: [
          {
            kind: "replace_tool_result" as const,
            toolUseIds: [(c.messages[2]!.content[0] as { tool_use_id: string }).tool_use_id] as [string],
            details: { content: "x".repeat(50_000), reason: "grow" },
          },
        ],
        tokensFreed: 1,
        stats: {},
      }),
    });
    c.tool("Read", { file_path: "c.ts" }, "short");
    const refusing = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: { layers: (defaults) => [growing, ...defaults] },
    });
    const before = await refusing.prepare(c.messages);
    expect(before.actions).toEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: "layer-failed", layer: "grow" }));
  });

  it("opens the breaker of a failing layer after three failures and tries it again after the cool-down", async () => {
    let calls = 0;
    let broken = true;
    const flaky = defineLayer({
      ...stripImages,
      name: "flaky",
      due: () => "every call",
      run(messages: readonly Message[]) {
        calls++;
        if (broken) throw new Error("flaky layer failed");
        return { messages: [...messages], edits: [], tokensFreed: 0, stats: {} };
      },
    });
    const events: ContextEvent[] = [];
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: { layers: (defaults) => [flaky, ...defaults], breakerCoolDownCalls: 5 },
    });
    for (let turn = 0; turn < 8; turn++) {
      c.tool("Read", { file_path: `f${turn}` }, "x");
      await manager.prepare(c.messages);
    }
    // Three failures open it; it is skipped for the five calls of its cool-down, then tried once (and fails again).
    expect(events.filter((event) => event.type === "breaker-open" && event.layer === "flaky")).toHaveLength(
      2,
    );
    expect(calls).toBe(4);
    broken = false;
    for (let turn = 8; turn < 14; turn++) {
      c.tool("Read", { file_path: `f${turn}` }, "x");
      await manager.prepare(c.messages);
    }
    expect(calls).toBeGreaterThan(4);
    expect(manager.status().failures.flaky).toBeUndefined();
  });
});

describe("background summaries", () => {
  it("are not spliced in when the files they would bring back take what they free", async () => {
    // A summariser whose summaries leave ~7,000 tokens of what they stand for, of a session that read large
    // files: applying one would restore the files (up to half of what it frees), so the request would gain
    // less than the tenth of the threshold a background summary must free.
    const files = new Map<string, string>();
    const sections = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n- noted`).join("\n");
    const leavesRoom: Summarizer = {
      name: "model",
      async summarize(request) {
        const target = estimateTokens(request.messages) - 7_000;
        return {
          text: `${sections}\n${filler(Math.max(0, target))}`,
          calls: 1,
          inputTokens: 1,
          outputTokens: 1,
        };
      },
    };
    const c = conversationBuilder().user("Review the modules one by one.");
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      summarizer: leavesRoom,
      onEvent: (event) => events.push(event),
      attachments: [createRecentFilesProvider({ root: tmpdir(), readFile: async (path) => files.get(path) })],
      config: {
        collapse: false,
        microcompact: false,
        cheapLayers: { level: 0.99, target: 0.5, minimumFreedShare: 0.5, protectShare: 0.01 },
        policy: {
          ...createFixedLevelPolicy(),
          startBackground: (input) => !input.backgroundPending && input.tokens >= input.threshold * 0.7,
        },
      },
    });
    for (let turn = 0; turn < 60; turn++) {
      const path = join(tmpdir(), `m${turn}.ts`);
      files.set(path, filler(1_500, turn));
      c.tool("Read", { file_path: path }, files.get(path)!);
      await manager.prepare(c.messages);
    }
    const threshold = manager.status().threshold;
    // Each background summary applied, as its layer report (the event just before "background-applied") says.
    const applied = events.flatMap((event, index) => {
      const report = events[index - 1];
      return event.type === "background-applied" && report?.type === "layer" ? [report] : [];
    });
    for (const report of applied)
      expect(report.tokensBefore - report.tokensAfter, report.reason).toBeGreaterThanOrEqual(threshold * 0.1);
    expect(
      events.filter((event) => event.type === "background-discarded" && event.reason.includes("outgrown"))
        .length,
      "background summaries that would have freed too little",
    ).toBeGreaterThan(0);
  });

  it("splice in at the threshold although the cheap layers folded part of what they summarise", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const extractive = createExtractiveSummarizer();
    const slow: Summarizer = {
      name: "slow",
      async summarize(request) {
        await gate;
        return extractive.summarize(request);
      },
    };
    const c = conversationBuilder().user("Audit every module.");
    const events: ContextEvent[] = [];
    const fixed = createFixedLevelPolicy({ level: 0.8, target: 0.5, minimumFreedShare: 0.02 });
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      summarizer: slow,
      onEvent: (event) => events.push(event),
      config: {
        cheapLayers: { level: 0.8, target: 0.5, minimumFreedShare: 0.02, protectShare: 0.01 },
        // A policy that starts the background summary at 70 %, before the cheap layers act at 80 %.
        policy: {
          ...fixed,
          startBackground: (input) => !input.backgroundPending && input.tokens >= input.threshold * 0.7,
        },
      },
    });
    const seen = (type: ContextEvent["type"]) => events.findIndex((event) => event.type === type);
    for (
      let turn = 0;
      turn < 120 && seen("background-applied") < 0 && seen("background-discarded") < 0;
      turn++
    ) {
      // Mostly reports no cheap layer may fold; now and then a file read, which collapse folds.
      c.tool("Task", { description: `module ${turn}` }, filler(1_500, turn));
      if (turn % 3 === 0) c.tool("Read", { file_path: `src/m${turn}.ts` }, filler(400, turn + 100));
      await manager.prepare(c.messages);
      const started = seen("background-started");
      const folded = events.findIndex(
        (event, index) => index > started && event.type === "layer" && event.layer === "collapse",
      );
      if ((started >= 0 && folded > started) || turn >= 60) release();
    }
    const started = seen("background-started");
    const folded = events.findIndex(
      (event, index) => index > started && event.type === "layer" && event.layer === "collapse",
    );
    expect(started, "a summary started in the background").toBeGreaterThanOrEqual(0);
    expect(folded, "collapse folded messages the summary covers while it was written").toBeGreaterThan(
      started,
    );
    expect(seen("background-discarded")).toBe(-1);
    expect(seen("background-applied")).toBeGreaterThan(folded);
  });
});
