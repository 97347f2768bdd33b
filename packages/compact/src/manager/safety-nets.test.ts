import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, findToolPairViolations, type Message, PromptTooLongError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { CompactionFailedError, ContextOverflowError } from "../compact-error.ts";
import { estimateTextTokens, estimateTokens, resultText } from "../conversation/conversation.ts";
import { defineLayer, type SummaryLayer, summaryDue } from "../layers/layer.ts";
import { resultFromEdits } from "../layers/layer-result.ts";
import { sessionMemoryCompact } from "../layers/session-memory-compact.ts";
import { applyToolResultBudget } from "../layers/tool-result-budget.ts";
import { createFixedLevelPolicy } from "../policy/compaction-policy.ts";
import { compactConversation } from "../summary/compact-conversation.ts";
import type { CompactionOutcome } from "../summary/compaction-outcome.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import type { SummarizeRequest, Summarizer } from "../summary/summarizer.ts";
import type { ContextEvent } from "./context-events.ts";
import { createContextManager } from "./context-manager.ts";

// The manager's safety nets that no other test exercised: each test here failed with its net's code removed.

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };

/** A summary layer as a user could write one, writing what `outcome` returns for the messages it is given. */
function userSummaryLayer(
  name: string,
  outcome: (
    messages: readonly Message[],
  ) => Pick<CompactionOutcome, "summarizedMessageIds" | "keptMessageIds">,
): SummaryLayer {
  return defineLayer({
    name,
    label: name,
    color: "#7c3aed",
    kind: "summary",
    due: (state) => summaryDue(state, true),
    async run(messages) {
      const { summarizedMessageIds, keptMessageIds } = outcome(messages);
      const kept = messages.filter((message) => keptMessageIds.includes(message.id));
      const messageText = `<summary>\nThe earlier part: ${summarizedMessageIds.length} messages of audit work.\n</summary>`;
      return {
        mode: "boundary",
        summary: "The earlier part.",
        messageText,
        keptMessageIds,
        summarizedMessageIds,
        tokensBefore: estimateTokens(messages),
        tokensAfter: estimateTextTokens(messageText) + estimateTokens(kept),
        summarizer: { name, calls: 0, inputTokens: 0, outputTokens: 0 },
        ptlRetries: 0,
        pieces: 1,
      };
    },
    describe: () => `Summarised by ${name}.`,
  });
}

/** An edit layer due at every call that throws while `broken()` says so, else replaces the older tool results. */
function flakyLayer(broken: () => boolean) {
  const counts = { calls: 0 };
  const layer = defineLayer({
    name: "flaky",
    label: "Flaky",
    color: "#0ea5e9",
    kind: "edit",
    due: () => "every call",
    run(messages: readonly Message[], context) {
      counts.calls++;
      if (broken()) throw new Error("flaky layer failed");
      // Every tool result but the newest, once: a real edit at each call while new results come in.
      const edits = messages.slice(0, -2).flatMap((message) =>
        message.content.flatMap((block) =>
          block.type === "tool_result" && block.content !== "cleared"
            ? [
                {
                  kind: "replace_tool_result" as const,
                  toolUseIds: [block.tool_use_id] as [string],
                  details: { content: "cleared", reason: "flaky" },
                },
              ]
            : [],
        ),
      );
      return resultFromEdits(messages, edits, new Date(context.now).toISOString(), 1, {});
    },
    describe: () => "Cleared older results.",
  });
  return { layer, counts };
}

describe("summary safety nets", () => {
  it("does not apply a summary that would remove the newest tool result or the user's unquoted newest message", async () => {
    const everything = userSummaryLayer("greedy", (messages) => ({
      summarizedMessageIds: messages.map((message) => message.id),
      keptMessageIds: [],
    }));
    const c = conversationBuilder().user("Audit the billing module.");
    for (let turn = 0; turn < 6; turn++) c.tool("Task", { description: `part ${turn}` }, filler(1_000, turn));
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { layers: (defaults) => [...defaults.filter((layer) => layer.kind === "edit"), everything] },
    });
    const afterTool = await manager.compact(c.messages);
    expect(afterTool.declined).toEqual([
      {
        layer: "greedy",
        reason: "The greedy compaction would have removed the newest tool result; not applied.",
      },
    ]);
    c.user("Now write the report for the finance team.");
    const afterUser = await manager.compact(c.messages);
    expect(afterUser.declined?.[0]?.reason).toBe(
      "The greedy compaction would have removed the user's newest message; not applied.",
    );
    expect(manager.status().compactions).toBe(0);
    expect(JSON.stringify(afterUser.messages)).toContain("Now write the report for the finance team.");
  });

  it("does not apply a summary that leaves 95 % of the context or more (the stall rule)", async () => {
    // Summarising only the first tool round of thirty frees about 3 %: not worth a cache break.
    const nibble = userSummaryLayer("nibble", (messages) => ({
      summarizedMessageIds: messages.slice(1, 3).map((message) => message.id),
      keptMessageIds: [messages[0]!, ...messages.slice(3)].map((message) => message.id),
    }));
    const c = conversationBuilder().user("Audit every module.");
    for (let turn = 0; turn < 30; turn++)
      c.tool("Task", { description: `part ${turn}` }, filler(1_000, turn));
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { layers: (defaults) => [...defaults.filter((layer) => layer.kind === "edit"), nibble] },
    });
    const result = await manager.compact(c.messages);
    const before = estimateTokens(c.messages);
    const reason = result.declined?.[0]?.reason ?? "";
    expect(reason).toMatch(/^The nibble was not applied: it would free only \d+ of about \d+ tokens/);
    const [, freed, of] = /free only (\d+) of about (\d+)/.exec(reason)!.map(Number);
    const left = of! - freed!;
    expect(Math.abs(of! - before) / before).toBeLessThan(0.05);
    expect(left / before).toBeGreaterThan(0.95);
    expect(left / before).toBeLessThan(1);
    expect(manager.status().compactions).toBe(0);
  });

  it("applies a summary although an attachment provider fails, and says which one failed", async () => {
    const events: ContextEvent[] = [];
    const c = conversationBuilder().user("Audit every module.");
    for (let turn = 0; turn < 10; turn++)
      c.tool("Task", { description: `part ${turn}` }, filler(1_000, turn));
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      attachments: [
        {
          name: "plan-file",
          async provide() {
            throw new Error("EACCES: permission denied, open 'PLAN.md'");
          },
        },
      ],
    });
    const compacted = await manager.compact(c.messages);
    expect(compacted.actions.map((action) => action.layer)).toContain("summary");
    expect(manager.status().compactions).toBe(1);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "layer-failed",
        layer: "summary",
        error: "Attachment provider plan-file: EACCES: permission denied, open 'PLAN.md'",
      }),
    );
  });

  it("a cancelled summary is not the summariser's failure: its breaker counts nothing", async () => {
    const controller = new AbortController();
    const extractive = createExtractiveSummarizer();
    const cancelled: Summarizer = {
      name: "cancelled",
      async summarize(request) {
        // The caller cancels while the summary is written (the user pressed Esc).
        if (!request.signal) return extractive.summarize(request);
        controller.abort();
        throw new Error("The summary request was aborted.");
      },
    };
    const events: ContextEvent[] = [];
    const c = conversationBuilder().user("Audit every module.");
    for (let turn = 0; turn < 45; turn++)
      c.tool("Task", { description: `part ${turn}` }, filler(1_000, turn));
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      summarizer: cancelled,
      onEvent: (event) => events.push(event),
    });
    await manager.prepare(c.messages, { signal: controller.signal });
    expect(controller.signal.aborted).toBe(true);
    expect(events.filter((event) => event.type === "layer-failed")).toEqual([]);
    expect(manager.status().failures).toEqual({});
  });
});

describe("background summaries", () => {
  it("are not spliced in when what they keep would start with a tool result whose call they summarised", async () => {
    // A user's background summary layer that summarises all but the last message of its snapshot (a tool
    // result): spliced in later, the request would open with a tool result and no call.
    const splitting = {
      ...userSummaryLayer("splitting-summary", (messages) => ({
        summarizedMessageIds: messages.slice(0, -1).map((message) => message.id),
        keptMessageIds: messages.slice(-1).map((message) => message.id),
      })),
      background: true,
    };
    const c = conversationBuilder().user("Audit every module.");
    const events: ContextEvent[] = [];
    const fixed = createFixedLevelPolicy({ level: 0.8, target: 0.5, minimumFreedShare: 0.02 });
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: {
        layers: (defaults) => [...defaults.filter((layer) => layer.kind === "edit"), defineLayer(splitting)],
        policy: {
          ...fixed,
          startBackground: (input) => !input.backgroundPending && input.tokens >= input.threshold * 0.7,
        },
      },
    });
    const seen = (type: ContextEvent["type"]) => events.some((event) => event.type === type);
    for (let turn = 0; turn < 80 && !seen("background-applied") && !seen("background-discarded"); turn++) {
      c.tool("Task", { description: `module ${turn}` }, filler(1_500, turn));
      const prepared = await manager.prepare(c.messages);
      expect(findToolPairViolations(prepared.projected), `turn ${turn}`).toEqual([]);
    }
    expect(seen("background-started")).toBe(true);
    expect(events).toContainEqual({
      type: "background-discarded",
      reason: "the conversation no longer ends with what it left out",
    });
  });
});

describe("breakers", () => {
  it("an edit layer's applied edits close its breaker: the count of failures starts again", async () => {
    let broken = true;
    const flaky = flakyLayer(() => broken);
    const events: ContextEvent[] = [];
    const c = conversationBuilder().user("Go.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      onEvent: (event) => events.push(event),
      config: { layers: (defaults) => [flaky.layer, ...defaults], breakerCoolDownCalls: 2 },
    });
    const turn = async (index: number) => {
      c.tool("Read", { file_path: `f${index}` }, filler(200, index));
      return manager.prepare(c.messages);
    };
    for (let index = 0; index < 3; index++) await turn(index);
    expect(manager.status().failures.flaky).toBe(3);
    broken = false;
    // After its cool-down it is tried once, and its edits apply.
    let index = 3;
    const applied = () => events.some((event) => event.type === "layer" && event.layer === "flaky");
    for (; index < 12 && !applied(); index++) await turn(index);
    expect(applied()).toBe(true);
    expect(manager.status().failures.flaky).toBeUndefined();
    // One more failure is one failure: the breaker stays closed.
    broken = true;
    await turn(index++);
    expect(manager.status().failures.flaky).toBe(1);
    expect(events.filter((event) => event.type === "breaker-open")).toHaveLength(1);
  });

  it("a summary re-arms the other layers' open breakers (the conversation they failed on is gone)", async () => {
    let broken = true;
    const flaky = flakyLayer(() => broken);
    const c = conversationBuilder().user("Audit every module.");
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { layers: (defaults) => [flaky.layer, ...defaults] },
    });
    for (let turn = 0; turn < 4; turn++) {
      c.tool("Task", { description: `part ${turn}` }, filler(1_500, turn));
      await manager.prepare(c.messages);
    }
    // Three failures opened it for twenty calls; the fourth call skipped it.
    expect(flaky.counts.calls).toBe(3);
    broken = false;
    const compacted = await manager.compact(c.messages);
    expect(compacted.actions.map((action) => action.layer)).toContain("summary");
    c.tool("Task", { description: "part 4" }, filler(1_500, 4));
    await manager.prepare(c.messages);
    expect(flaky.counts.calls, "tried again at the first call after the summary").toBe(4);
  });
});

describe("recover() limits", () => {
  const overflow = new PromptTooLongError("prompt is too long: 400000 tokens > 20000 maximum", {
    actualTokens: 400_000,
    limitTokens: 20_000,
  });

  it("runs at most three rounds in a turn, however often the provider refuses", async () => {
    // A user's layer that clears one old tool result per round: every round shrinks the context a little.
    let rounds = 0;
    const oneAtATime = defineLayer({
      name: "one-at-a-time",
      label: "One at a time",
      color: "#16a34a",
      kind: "edit",
      due: (state) => (state.trigger === "reactive" ? "the provider refused the request" : false),
      run(messages: readonly Message[], context) {
        rounds++;
        const block = messages
          .flatMap((message) => message.content)
          .find((candidate) => candidate.type === "tool_result" && candidate.content !== "cleared");
        const edits =
          block?.type === "tool_result"
            ? [
                {
                  kind: "replace_tool_result" as const,
                  toolUseIds: [block.tool_use_id] as [string],
                  details: { content: "cleared", reason: "one at a time" },
                },
              ]
            : [];
        return resultFromEdits(messages, edits, new Date(context.now).toISOString(), 1, {});
      },
      describe: () => "Cleared one old result.",
    });
    const c = conversationBuilder().user("Go.");
    for (let turn = 0; turn < 12; turn++) c.tool("Task", { description: `f${turn}` }, filler(1_000, turn));
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: c.now,
      config: { layers: () => [oneAtATime] },
    });
    await manager.prepare(c.messages);
    // Each refusal says a twentieth fits: every round shrinks, none gets there.
    let last: unknown;
    for (let refusal = 0; refusal < 5; refusal++) {
      last = await manager.recover(overflow).then(
        () => undefined,
        (error: unknown) => error,
      );
    }
    expect(rounds).toBe(3);
    expect(last).toBeInstanceOf(ContextOverflowError);
    expect((last as Error).message).toContain("the 3 recoveries of this turn are used up");
  });

  it("stops at a round that shrank nothing and says nothing is left, without using up the turn's rounds", async () => {
    // Only the newest turn: nothing any layer may remove.
    const c = conversationBuilder().user("Summarise this report.");
    c.tool("Task", { description: "report" }, filler(3_000, 1));
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: c.now,
    });
    await manager.prepare(c.messages);
    const error = await manager.recover(overflow).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as Error).message).toContain("nothing is left to compact");
  });
});

describe("the summary request's prompt-too-long nets", () => {
  /**
   * A model summariser's stand-in with a window of `window` tokens: a request over it is refused as the
   * providers refuse it (saying by how much when `sayGap`), one under it gets the extractive summary.
   */
  function windowedSummarizer(window: number, sayGap = true) {
    const extractive = createExtractiveSummarizer();
    const requests: SummarizeRequest[] = [];
    const summarizer: Summarizer = {
      name: "windowed",
      boundedByModelWindow: true,
      async summarize(request) {
        requests.push(request);
        const tokens = estimateTokens(request.messages);
        if (tokens > window) {
          throw new PromptTooLongError(
            `prompt is too long: ${tokens} tokens > ${window} maximum`,
            sayGap ? { actualTokens: tokens, limitTokens: window } : {},
          );
        }
        return { ...(await extractive.summarize(request)), calls: 1 };
      },
    };
    return { summarizer, requests };
  }

  const longSession = (rounds: number, userEvery: number) => {
    const c = conversationBuilder().user("Request 0: audit every module.");
    for (let round = 0; round < rounds; round++) {
      if (round > 0 && round % userEvery === 0) c.user(`Request ${round}: go on with part ${round}.`);
      c.tool("Task", { description: `part ${round}` }, filler(600, round));
    }
    c.user("Latest: write the report.");
    return c.messages;
  };

  it("summarises in pieces before the call when the input is over what the model takes (no refused call)", async () => {
    const { summarizer, requests } = windowedSummarizer(4_000);
    const outcome = await compactConversation(longSession(16, 4), {
      summarizer,
      trigger: "auto",
      summaryMaxTokens: 1_000,
      maxInputTokens: 4_000,
    });
    // Every piece fits what the model takes: none is refused, and no round is left out.
    expect(requests.length).toBeGreaterThan(1);
    expect(outcome.ptlRetries).toBe(0);
    expect(outcome.pieces).toBe(requests.length);
  });

  it("retries a refused summary at most three times, then fails saying so (the conversation unchanged)", async () => {
    // The model refuses every request without saying by how much: each retry splits what is left again.
    const { summarizer, requests } = windowedSummarizer(10, false);
    const failure = await compactConversation(longSession(20, 5), {
      summarizer,
      trigger: "auto",
      summaryMaxTokens: 1_000,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(CompactionFailedError);
    expect((failure as Error).message).toContain("after 3 retries");
    expect(requests).toHaveLength(4);
  });

  it("keeps every user message through repeated retries: each refused piece is split, none left out", async () => {
    // Refused twice without a size (what is left is split again each time), then accepted.
    const { summarizer, requests } = windowedSummarizer(Number.POSITIVE_INFINITY);
    let refusals = 0;
    const refusing: Summarizer = {
      ...summarizer,
      async summarize(request) {
        if (refusals < 2) {
          refusals++;
          requests.push(request);
          throw new PromptTooLongError("prompt is too long");
        }
        return summarizer.summarize(request);
      },
    };
    const messages = longSession(20, 2);
    const outcome = await compactConversation(messages, {
      summarizer: refusing,
      trigger: "auto",
      summaryMaxTokens: 1_000,
    });
    expect(outcome.ptlRetries).toBe(2);
    // Each was sent to the summariser in some piece, and the summary carries it (its `<user-messages>` block).
    const sent = JSON.stringify(requests.map((request) => request.messages));
    const summarised = new Set(outcome.summarizedMessageIds);
    const userWords = messages.flatMap((message) =>
      summarised.has(message.id) && message.role === "user"
        ? message.content.flatMap((block) => (block.type === "text" ? [block.text] : []))
        : [],
    );
    expect(userWords.length).toBeGreaterThan(5);
    for (const words of userWords) {
      expect(sent, words).toContain(words);
      expect(outcome.messageText, words).toContain(words);
    }
  });
});

describe("the tool-result budget's net", () => {
  it("cuts an output in the middle when saving it fails (the session folder is not writable), and says so", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-budget-"));
    try {
      // A file where the session folder should be: every save fails with ENOTDIR.
      const notAFolder = join(dir, "session");
      await writeFile(notAFolder, "");
      const big = `${"line of build output\n".repeat(5_000)}DONE`;
      const c = conversationBuilder().user("build it").tool("Bash", { command: "make" }, big);
      const result = await applyToolResultBudget(c.messages, {
        sessionDir: notAFolder,
        maxResultChars: 10_000,
      });
      expect(result.stats).toMatchObject({ persisted: 0, persistFailed: 1, truncated: 1 });
      const block = result.messages.at(-1)!.content[0]!;
      const text = block.type === "tool_result" ? resultText(block) : "";
      expect(text.length).toBeLessThanOrEqual(11_000);
      expect(text.startsWith("line of build output")).toBe(true);
      expect(text.endsWith("DONE")).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("session-memory compaction's net", () => {
  it("is not used when the notes and what they keep would be at the threshold (it would fire again at once)", async () => {
    const c = conversationBuilder().user("Refactor the cache.");
    for (let index = 0; index < 30; index++) c.tool("Task", { description: `${index}` }, filler(600, index));
    const notes = {
      async waitForPendingExtraction() {},
      async readNotes() {
        return {
          text: "# Current State\nHalf done.\n",
          path: "notes.md",
          lastSummarizedMessageId: c.messages[40]!.id,
        };
      },
    };
    const keep = { minTokens: 2_000, maxTokens: 6_000, minTextMessages: 1 };
    const fits = await sessionMemoryCompact(c.messages, { source: notes, threshold: 20_000, keep });
    const after = fits!.tokensAfter;
    expect(
      await sessionMemoryCompact(c.messages, { source: notes, threshold: after + 1, keep }),
    ).toBeDefined();
    expect(await sessionMemoryCompact(c.messages, { source: notes, threshold: after, keep })).toBeUndefined();
    // What is restored after it counts too.
    expect(
      await sessionMemoryCompact(c.messages, {
        source: notes,
        threshold: after + 1,
        keep,
        reservedTokens: 1,
      }),
    ).toBeUndefined();
  });
});

describe("saved outputs' net", () => {
  it("points at an output saved as it arrived only once its write has completed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-saved-"));
    try {
      // A tool no list knows (its results are saved before they are cleared), the cache cold: the outputs'
      // writes start when they arrive, and the cheap layers clear them in the same call.
      const messages: Message[] = [createMessage("user", "Run the checks.", { id: "u0", timestamp: iso(0) })];
      for (let index = 0; index < 40; index++) {
        const id = `toolu_${index}`;
        messages.push(
          createMessage("assistant", [{ type: "tool_use", id, name: "custom_Run", input: { n: index } }], {
            id: `a${index}`,
            timestamp: iso(index * 10_000),
          }),
          createMessage("user", [{ type: "tool_result", tool_use_id: id, content: filler(1_500, index) }], {
            id: `r${index}`,
            timestamp: iso(index * 10_000 + 500),
          }),
        );
      }
      const manager = createContextManager({
        model: "test",
        limits: { contextWindow: 50_000, maxOutputTokens: 8_000 },
        sessionDir: dir,
        clock: () => 400_000 + 3_600_000,
      });
      const result = await manager.prepare(messages);
      expect(result.actions.some((action) => (action.stats.saved ?? 0) > 0)).toBe(true);
      // Checked at once, before any other I/O could finish a write the edits did not wait for.
      const paths = [...JSON.stringify(result.projected).matchAll(/tool-results\/(toolu_\d+)/g)].map(
        (match) => match[1]!,
      );
      expect(paths.length).toBeGreaterThan(5);
      for (const id of new Set(paths)) {
        const index = Number(id.slice("toolu_".length));
        expect(readFileSync(join(dir, "tool-results", id), "utf8")).toBe(filler(1_500, index));
      }
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
