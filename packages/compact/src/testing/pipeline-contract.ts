import { contentBlocks, createMessage, createUsage, type Message, PromptTooLongError } from "@unforget/core";
import { applyPlugins, createSessionHooks } from "@unforget/hooks";
import { projectMessages, type TranscriptEntry, toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { ContextOverflowError } from "../compact-error.ts";
import { estimateTokens } from "../conversation/conversation.ts";
import type { ContextEvent } from "../manager/context-events.ts";
import type { ContextManager, PrepareResult } from "../manager/context-manager.ts";
import type { ContextManagerOptions } from "../manager/context-manager-options.ts";
import { replayConversation } from "../replay/replay-conversation.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import type { SummarizeRequest, Summarizer, SummaryResult } from "../summary/summarizer.ts";
import { SUMMARY_SECTIONS } from "../summary/summary-format.ts";

/** What the suite gives the factory: a window, and options the manager must be created with. */
export interface ManagerUnderTest {
  window: number;
  /** The replay's clock (also in `options.clock`). */
  clock: () => number;
  /** Pass these to the manager (`createContextManager({ …, ...options })`): the clock, hooks, summarisers, a listener, config. */
  options: Pick<
    ContextManagerOptions,
    "clock" | "hooks" | "summarizer" | "fallbackSummarizer" | "onEvent" | "config"
  >;
}

export interface PipelineContractOptions {
  /** Shown in test names. */
  name: string;
  /** Creates the manager under test for a window, with the options the suite passes (hooks, summarisers, clock). */
  createManager(context: ManagerUnderTest): ContextManager;
  /** Recorded conversations to replay (e.g. every corpus session, imported). */
  sessions: readonly { name: string; messages: readonly Message[] }[];
  /** Windows to replay at; default 16,000, 32,000 and 200,000 tokens. */
  windows?: readonly number[];
  /** Only the replays of `sessions` (an evaluation over a corpus, beside a unit suite that runs the guarantees). */
  recordedOnly?: boolean;
}

/**
 * The conformance suite of a whole ladder. Every session replayed call by call at every window gives requests
 * that never exceed the window, never orphan a tool_use or tool_result, alternate roles, keep each of the
 * user's messages (verbatim or in a summary) and the newest turn, and project from the transcript to the live
 * request. And the guarantees, each on a conversation built for it: no PreCompact veto makes a request exceed
 * the window, and what cannot fit (a system prompt larger than the window) is refused with
 * `ContextOverflowError`; `recover()` shrinks the context to what the provider said fits, or throws
 * `ContextOverflowError`, and only after a round that shrank it when there was something to shrink; the newest
 * turn survives a summary however large it is; a summary that would not shrink the context is not applied (the
 * stall rule) and counts as its summariser's failure, nor one that would leave the context larger as the next
 * request is measured (the provider's count before, the estimate after); one that leaves too much hands over to the fallback
 * summariser (the thrash guard); a failing summariser opens its breaker, the fallback summarises in its place
 * (in the same call), the breaker closes again after its cool-down and a success, and a failure at the blocking
 * limit still sends a request that fits (the emergency summary, on the fallback summariser); every
 * message the user wrote survives many summaries by a summariser that quotes none; a pinned tool result stays
 * verbatim with its call through a summary.
 */
export function describeContextManagerContract(options: PipelineContractOptions): void {
  const windows = options.windows ?? [16_000, 32_000, 200_000];
  describe(`context manager contract: ${options.name}`, () => {
    for (const session of options.sessions) {
      it(`replays ${session.name} at ${windows.join(", ")} tokens with no overflow and no violation`, async () => {
        for (const window of windows) await checkReplay(options, session.messages, window);
      });
    }
    if (options.recordedOnly === true) return;
    describeWindowGuarantees(options);
    describeRecoverGuarantee(options);
    describeSummaryGuards(options);
    describeUserMessageGuarantee(options);
    describePinGuarantee(options);
  });
}

async function checkReplay(options: PipelineContractOptions, messages: readonly Message[], window: number) {
  let manager: ContextManager | undefined;
  const { stats, calls } = await replayConversation(messages, {
    window,
    createManager: (clock) => {
      manager = options.createManager({ window, clock, options: { clock } });
      return manager;
    },
  });
  expect(stats.violations, `at ${window}`).toEqual([]);
  expect(stats.overflows, `at ${window}`).toBe(0);
  expect(stats.peakTokens).toBeLessThanOrEqual(window);
  expect(calls.length).toBeGreaterThan(0);
  const entries = JSON.parse(JSON.stringify(manager!.entries)) as TranscriptEntry[];
  expect(JSON.stringify(toRequestMessages(projectMessages(entries)))).toBe(
    JSON.stringify(calls.at(-1)!.messages),
  );
}

/** The window of the guarantee tests: large enough that the threshold and the blocking limit are apart. */
const WINDOW = 60_000;

/** No veto makes a request exceed the window; the newest turn stays. */
function describeWindowGuarantees(options: PipelineContractOptions): void {
  it("never sends more than the window, even when a PreCompact plugin vetoes every compaction", async () => {
    const hooks = createSessionHooks({ onHookError: () => {} });
    applyPlugins(hooks, [
      {
        name: "veto-everything",
        apply(bus) {
          bus.preCompact.tapPromise("veto-everything", async (result) => ({
            ...result,
            veto: { reason: "no" },
          }));
        },
      },
    ]);
    const events: ContextEvent[] = [];
    for (const window of [16_000, 32_000]) {
      const { stats } = await replayConversation(growingSession(120, window / 40), {
        window,
        createManager: (clock) =>
          options.createManager({
            window,
            clock,
            options: { clock, hooks, onEvent: (event) => events.push(event) },
          }),
      });
      expect(stats.overflows, `at ${window}`).toBe(0);
      expect(stats.violations, `at ${window}`).toEqual([]);
    }
    expect(events.some((event) => event.type === "vetoed")).toBe(true);
    expect(events.some((event) => event.type === "veto-overridden" && event.by === "veto-everything")).toBe(
      true,
    );
  });

  it("keeps the newest tool result and the user's newest message through a summary, however large", async () => {
    const session = growingSession(40, 1_200);
    // The user's newest message, then a tool result larger than any verbatim tail a summary keeps.
    const at = Date.parse(session.at(-1)!.timestamp);
    const request = `Now: ${"update the changelog for every change you made; ".repeat(60)}then stop.`;
    session.push(
      createMessage("user", request, { id: "u-latest", timestamp: new Date(at + 1_000).toISOString() }),
    );
    session.push(toolUse("toolu_latest", "Bash", { command: "npm test" }, at + 2_000));
    const log = `FAIL src/date.test.ts > parses ISO weeks\n${"  at parse (src/date.ts:12:3)\n".repeat(900)}`;
    session.push(toolResult("toolu_latest", log, at + 3_000));
    const clock = () => at + 3_000;
    const manager = options.createManager({ window: WINDOW, clock, options: { clock } });
    const prepared = await manager.prepare(session);
    expect(manager.status().compactions).toBeGreaterThan(0);
    const text = JSON.stringify(prepared.messages);
    const result = prepared.messages
      .flatMap((message) => contentBlocks(message.content))
      .find((block) => block.type === "tool_result" && block.tool_use_id === "toolu_latest");
    expect(result, "the newest tool result is in the request").toBeDefined();
    expect(JSON.stringify(result)).toContain("FAIL src/date.test.ts > parses ISO weeks");
    expect(text).toContain(JSON.stringify(request).slice(1, -1));
  });
}

/** A pinned message stays verbatim, with its tool partner, through a summary. */
function describePinGuarantee(options: PipelineContractOptions): void {
  it("keeps a pinned tool result verbatim, with its call, through a summary", async () => {
    const session = growingSession(30, 800);
    const clock = () => Date.parse(session.at(-1)!.timestamp);
    const manager = options.createManager({ window: WINDOW, clock, options: { clock } });
    await manager.prepare(session);
    const before = await manager.prepare(session);
    const pinned = JSON.stringify(findResult(before.messages, "toolu_3"));
    expect(pinned).toContain("toolu_3");
    const item = await manager.pin(session, "toolu_3");
    expect(item.messageIds).toHaveLength(2);
    const compacted = await manager.compact(session);
    expect(manager.status().compactions).toBeGreaterThan(0);
    expect(findResult(compacted.messages, "toolu_2"), "an unpinned result is summarised").toBeUndefined();
    expect(JSON.stringify(findResult(compacted.messages, "toolu_3"))).toBe(pinned);
    const uses = compacted.messages.flatMap((message) =>
      contentBlocks(message.content).flatMap((block) => (block.type === "tool_use" ? [block.id] : [])),
    );
    expect(uses).toContain("toolu_3");
    expect(manager.pins().items.map((pin) => pin.honoured)).toEqual([true]);
  });
}

function findResult(messages: readonly { content: Message["content"] | string }[], id: string) {
  return messages
    .flatMap((message) => contentBlocks(message.content))
    .find((block) => block.type === "tool_result" && block.tool_use_id === id);
}

/**
 * `recover()` returns a request that fits what the provider said, or throws `ContextOverflowError`; and with
 * something to shrink it shrinks the context before it gives up.
 */
function describeRecoverGuarantee(options: PipelineContractOptions): void {
  it("recover() shrinks the context to what the provider said fits, or throws ContextOverflowError only after a shrinking round", () =>
    checkRecoverGuarantee(options.createManager));
}

/**
 * The checks of the `recover()` guarantee, on the manager `createManager` makes (the contract's self-test runs
 * them on managers that break it). Rejects with the first failed expectation.
 */
export async function checkRecoverGuarantee(
  createManager: PipelineContractOptions["createManager"],
): Promise<void> {
  // Thirty rounds of tool output, far under a 200K window: a summary can shrink it to a fraction.
  const session = growingSession(30, 1_500);
  const clock = () => Date.parse(session.at(-1)!.timestamp);
  const manager = createManager({ window: 200_000, clock, options: { clock } });
  let tokens = (await manager.prepare(session)).tokens;
  let shrunk = 0;
  for (let round = 0; round < 6; round++) {
    // The provider counts a third more than the manager did, and allows what the manager counted.
    const refused = new PromptTooLongError(
      `prompt is too long: ${Math.ceil(tokens * 1.33)} tokens > ${tokens} maximum`,
      {
        actualTokens: Math.ceil(tokens * 1.33),
        limitTokens: tokens,
      },
    );
    try {
      const recovered = await manager.recover(refused);
      expect(recovered.tokens, `round ${round}`).toBeLessThanOrEqual(Math.floor(tokens / 1.33));
      tokens = recovered.tokens;
      shrunk++;
    } catch (error) {
      expect(error).toBeInstanceOf(ContextOverflowError);
      expect((error as Error).message).toMatch(/transcript is intact/);
      break;
    }
  }
  // Giving up at once is not a recovery: thirty rounds of old tool output were there to summarise.
  expect(shrunk, "recover() gave up before any round shrank the context").toBeGreaterThan(0);
  // When what is left (here the newest tool results, five at once, within the budget's limits) is larger
  // than what the provider takes, it says so.
  const huge = growingSession(10, 1_500);
  const at = Date.parse(huge.at(-1)!.timestamp);
  const ids = [0, 1, 2, 3, 4].map((part) => `toolu_part_${part}`);
  huge.push(
    createMessage(
      "assistant",
      ids.map((id) => ({ type: "tool_use" as const, id, name: "Task", input: { description: id } })),
      { id: "a-parts", timestamp: new Date(at + 1_000).toISOString() },
    ),
  );
  huge.push(
    createMessage(
      "user",
      ids.map((id, part) => ({
        type: "tool_result" as const,
        tool_use_id: id,
        content: report(part, 5_000),
      })),
      { id: "r-parts", timestamp: new Date(at + 2_000).toISOString() },
    ),
  );
  const stuck = createManager({ window: 200_000, clock, options: { clock } });
  const before = (await stuck.prepare(huge)).tokens;
  const limit = Math.floor(before / 3);
  const tooLong = new PromptTooLongError(`prompt is too long: ${before} tokens > ${limit} maximum`, {
    actualTokens: before,
    limitTokens: limit,
  });
  for (let round = 0; round < 4; round++) {
    const outcome = await stuck.recover(tooLong).then(
      (recovered) => recovered.tokens,
      (error: unknown) => error,
    );
    if (typeof outcome === "number")
      expect(outcome, "never a request still over the limit").toBeLessThanOrEqual(limit);
    else {
      expect(outcome).toBeInstanceOf(ContextOverflowError);
      // Ten older rounds could be summarised: they were, before it gave up.
      expect(stuck.status().tokens, "recover() gave up without shrinking what it could").toBeLessThan(before);
      return;
    }
  }
}

/** The summary's safety nets: the stall rule, the thrash guard, the breaker with its cool-down, the fallback. */
function describeSummaryGuards(options: PipelineContractOptions): void {
  it("does not apply a summary that would not shrink the context (the stall rule)", async () => {
    const bloated = scriptedSummarizer("bloated", (request) => "x ".repeat(estimateInput(request) * 2));
    const events: ContextEvent[] = [];
    const { stats } = await replay(options, growingSession(80, 1_000), {
      summarizer: bloated,
      onEvent: (event) => events.push(event),
    });
    expect(bloated.calls).toBeGreaterThan(0);
    expect(stats.overflows).toBe(0);
    const applied = events.filter((event) => event.type === "layer" && event.summarizer === "bloated");
    expect(applied, "a summary larger than what it replaces is never applied").toEqual([]);
    // A summary not applied is a failure of its summariser: three open its breaker (else it is asked, and paid
    // for, at every call), and the fallback summarises.
    expect(events.some((event) => event.type === "breaker-open")).toBe(true);
    expect(events.some((event) => event.type === "layer" && event.summarizer === "extractive")).toBe(true);
  });

  it("never applies a compaction that leaves the context larger, measured as the provider counted it", async () => {
    // The provider counted the conversation at its plain estimate: a third less than the padded estimate the
    // manager counts a summary with. Summaries of every size from a third to all of the conversation: each is
    // applied only when the context measured after it is smaller, else declined with a reason.
    const session = growingSession(8, 800);
    const counted = estimateTokens(session);
    const at = Date.parse(session.at(-1)!.timestamp);
    session.push(
      createMessage("assistant", "Part 8 is audited too.", {
        id: "a-counted",
        timestamp: new Date(at + 1_000).toISOString(),
        usage: createUsage({ inputTokens: counted, outputTokens: 10 }),
      }),
      createMessage("user", "Thanks. Go on.", {
        id: "u-next",
        timestamp: new Date(at + 2_000).toISOString(),
      }),
    );
    const clock = () => at + 2_000;
    let applied = 0;
    for (const share of [0.3, 0.45, 0.6, 0.7, 0.8, 0.9, 1]) {
      const sized = scriptedSummarizer("sized", () => "word ".repeat(Math.floor(counted * share * 0.8)));
      const manager = options.createManager({
        window: WINDOW,
        clock,
        options: { clock, summarizer: sized, fallbackSummarizer: sized },
      });
      await manager.prepare(session);
      const result = await manager.compact(session);
      if (result.actions.length === 0) {
        expect(result.declined?.length, `a summary of ${share} not applied says why`).toBeGreaterThan(0);
        expect(result.tokens).toBe(result.tokensBefore);
        continue;
      }
      applied++;
      expect(result.tokens, `a summary of ${share} of the conversation`).toBeLessThan(result.tokensBefore);
      expect(manager.status().tokens).toBeLessThan(result.tokensBefore);
    }
    expect(applied, "the smaller summaries are applied").toBeGreaterThan(0);
  });

  it("hands over to the fallback summariser when summaries leave too much (the thrash guard)", async () => {
    // Each summary is half the window as the manager counts it (padded): it shrinks the context, but leaves it
    // above half the threshold.
    const thrashing = scriptedSummarizer("thrashing", () => "word ".repeat(Math.floor(WINDOW * 0.3)));
    const events: ContextEvent[] = [];
    await replay(options, growingSession(160, 1_000), {
      summarizer: thrashing,
      // The breaker stays open for the rest of the session: the next summary falls within its cool-down
      // however many calls the summaries' sizes leave between them.
      config: { breakerCoolDownCalls: 1_000 },
      onEvent: (event) => events.push(event),
    });
    expect(events.some((event) => event.type === "breaker-open" && event.layer === "summary")).toBe(true);
    // Three thrashing summaries open its breaker; the next summary is the fallback's, and leaves less.
    const summaries = events.flatMap((event) => (event.type === "layer" && event.summarizer ? [event] : []));
    expect(summaries.slice(0, 3).map((event) => event.summarizer)).toEqual([
      "thrashing",
      "thrashing",
      "thrashing",
    ]);
    expect(summaries[3]?.summarizer).toBe("extractive");
    expect(summaries[3]!.tokensAfter).toBeLessThan(summaries[2]!.tokensAfter);
  });

  it("opens the breaker of a failing summariser, lets the fallback summarise, and closes it after the cool-down", async () => {
    let healthy = false;
    const flaky = scriptedSummarizer("flaky", () => {
      if (!healthy) throw new Error("the summary model is overloaded");
      return undefined;
    });
    const events: ContextEvent[] = [];
    const session = growingSession(260, 1_000);
    const clock = { now: Date.parse(session[0]!.timestamp) };
    const manager = options.createManager({
      window: WINDOW,
      clock: () => clock.now,
      options: { clock: () => clock.now, summarizer: flaky, onEvent: (event) => events.push(event) },
    });
    const history: Message[] = [];
    let prepared = 0;
    let next = 0;
    const prepareNext = async () => {
      for (; next < session.length; next++) {
        const message = session[next]!;
        history.push(message);
        clock.now = Date.parse(message.timestamp);
        if (message.role !== "user") continue;
        next++;
        const result = await manager.prepare(history);
        prepared++;
        expect(result.tokens).toBeLessThanOrEqual(WINDOW);
        return result;
      }
      return undefined;
    };
    let opening: PrepareResult | undefined;
    for (let result = await prepareNext(); result; result = await prepareNext()) {
      if (!opening && events.some((event) => event.type === "breaker-open")) {
        opening = result;
        healthy = true;
      }
      if (healthy && events.some((event) => event.type === "layer" && event.summarizer === "flaky")) break;
    }
    const opened = events.findIndex((event) => event.type === "breaker-open");
    expect(opened, "three failures open the breaker").toBeGreaterThanOrEqual(0);
    expect(flaky.failures, "no more attempts while it is open").toBe(3);
    const fallback = events.findIndex((event) => event.type === "layer" && event.summarizer === "extractive");
    expect(fallback, "the fallback summarised instead").toBeGreaterThanOrEqual(0);
    const back = events.findIndex((event) => event.type === "layer" && event.summarizer === "flaky");
    expect(back, `the summariser is tried again after the cool-down (${prepared} calls)`).toBeGreaterThan(
      opened,
    );
    // The call whose failure opened the breaker still got its summary, from the fallback.
    expect(opening?.actions.some((action) => action.summarizer === "extractive")).toBe(true);
    // Its success closed the breaker: one more failure is one failure, not a breaker open again.
    healthy = false;
    const count = (type: ContextEvent["type"]) => events.filter((event) => event.type === type).length;
    const opens = count("breaker-open");
    const failures = count("layer-failed");
    while (count("layer-failed") === failures && (await prepareNext()));
    // (A background summary and the one written at the threshold may both fail in that call: fewer than three.)
    expect(count("layer-failed") - failures, "the summariser failed again").toBeGreaterThan(0);
    expect(count("layer-failed") - failures).toBeLessThan(3);
    expect(count("breaker-open"), "a success resets the count of failures").toBe(opens);
  });

  it("sends a request that fits after the summariser fails at the blocking limit: the fallback summarises (emergency)", async () => {
    // One failure of the summariser while the context jumps past the window (the provider counted far more
    // than the estimate): a breaker open after three failures does not help here; the emergency path must.
    const window = 32_000;
    const failsOnce = scriptedSummarizer("fails-once", () => {
      if (failsOnce.failures === 0) throw new Error("the summary model is overloaded");
      return undefined;
    });
    const events: ContextEvent[] = [];
    const session = growingSession(8, 900);
    const at = Date.parse(session.at(-1)!.timestamp);
    const clock = () => at + 2_000;
    const manager = options.createManager({
      window,
      clock,
      options: { clock, summarizer: failsOnce, onEvent: (event) => events.push(event) },
    });
    const first = await manager.prepare(session);
    expect(first.tokens, "the session starts under half the window").toBeLessThan(window / 2);
    session.push(
      createMessage("assistant", "Part 12 is audited too.", {
        id: "a-jump",
        timestamp: new Date(at + 1_000).toISOString(),
        usage: createUsage({ inputTokens: Math.round(window * 1.1), outputTokens: 20 }),
      }),
      createMessage("user", "Now write the audit report.", {
        id: "u-jump",
        timestamp: new Date(at + 2_000).toISOString(),
      }),
    );
    const prepared = await manager.prepare(session);
    expect(failsOnce.failures, "the summariser failed once").toBe(1);
    expect(prepared.tokens).toBeLessThanOrEqual(prepared.status.blockingLimit);
    expect(prepared.actions.some((action) => action.summarizer === "extractive")).toBe(true);
    expect(JSON.stringify(prepared.messages)).toContain("Now write the audit report.");
  });

  it("never returns a request over the window: a system prompt larger than the window is refused", async () => {
    const window = 16_000;
    const session = growingSession(6, 500);
    const clock = () => Date.parse(session.at(-1)!.timestamp);
    const manager = options.createManager({ window, clock, options: { clock } });
    const system = report(0, window * 2);
    const outcome = await manager.prepare(session, { system }).then(
      (prepared) => prepared.tokens,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(ContextOverflowError);
    expect((outcome as Error).message).toMatch(/transcript is intact/);
  });
}

async function replay(
  options: PipelineContractOptions,
  session: readonly Message[],
  extra: ManagerUnderTest["options"],
) {
  return replayConversation(session, {
    window: WINDOW,
    createManager: (clock) => options.createManager({ window: WINDOW, clock, options: { ...extra, clock } }),
  });
}

/** A weak summariser: one fixed sentence, whatever it is given; it quotes none of the user's messages. */
const fixedSentence: Summarizer = {
  name: "fixed-sentence",
  async summarize(): Promise<SummaryResult> {
    return { text: "The work goes on.", inputTokens: 0, outputTokens: 0, calls: 0 };
  },
};

/** Every message the user wrote survives any number of summaries, whatever the summariser writes. */
function describeUserMessageGuarantee(options: PipelineContractOptions): void {
  it("keeps every message of the user through many summaries by a summariser that quotes none", async () => {
    for (const window of [16_000, 32_000]) {
      const events: ContextEvent[] = [];
      const { stats } = await replayConversation(growingSession(150, window / 40), {
        window,
        createManager: (clock) =>
          options.createManager({
            window,
            clock,
            options: {
              clock,
              summarizer: fixedSentence,
              fallbackSummarizer: fixedSentence,
              onEvent: (event) => events.push(event),
            },
          }),
      });
      const summaries = events.filter(
        (event) => event.type === "layer" && event.summarizer === "fixed-sentence",
      );
      expect(summaries.length, `summaries at ${window}`).toBeGreaterThan(1);
      // The replay checks every request for each message the user wrote so far (verbatim, or carried).
      expect(stats.violations, `at ${window}`).toEqual([]);
    }
  });
}

/**
 * A conversation that grows by one tool round of about `tokensPerRound` each turn (a subagent's report, which
 * no cheap layer may clear, so summaries must act), with a request from the user every tenth round.
 */
function growingSession(rounds: number, tokensPerRound: number): Message[] {
  const messages: Message[] = [];
  let time = Date.parse("2026-01-01T00:00:00Z");
  const next = () => {
    time += 2_000;
    return time;
  };
  for (let round = 0; round < rounds; round++) {
    if (round % 10 === 0) {
      messages.push(
        createMessage("user", `Request ${round / 10}: continue with part ${round} of the audit.`, {
          id: `u${round}`,
          timestamp: new Date(next()).toISOString(),
        }),
      );
    }
    const id = `toolu_${round}`;
    messages.push(toolUse(id, "Task", { description: `audit part ${round}` }, next()));
    messages.push(toolResult(id, report(round, tokensPerRound), next()));
  }
  messages.push(
    createMessage("assistant", "The audit is done.", {
      id: "a-done",
      timestamp: new Date(next()).toISOString(),
    }),
  );
  return messages;
}

function toolUse(id: string, name: string, input: Record<string, unknown>, time: number): Message {
  return createMessage("assistant", [{ type: "tool_use", id, name, input }], {
    id: `a-${id}`,
    timestamp: new Date(time).toISOString(),
  });
}

function toolResult(id: string, content: string, time: number): Message {
  return createMessage("user", [{ type: "tool_result", tool_use_id: id, content }], {
    id: `r-${id}`,
    timestamp: new Date(time).toISOString(),
  });
}

function report(round: number, tokens: number): string {
  const words = ["audit", "module", "finding", "checked", "config", "handler", "schema", "route"];
  const out: string[] = [];
  for (let index = 0; index < tokens; index++) {
    out.push(words[(index * 7 + round) % words.length]!);
    if (index % 14 === 13) out.push(`\nitem ${round}.${index}:`);
  }
  return out.join(" ");
}

function estimateInput(request: SummarizeRequest): number {
  return Math.ceil(JSON.stringify(request.messages).length / 4);
}

/**
 * A summariser whose text the test decides (`undefined`: the extractive summary of the same request), counting
 * its calls and failures. Its summaries have the nine sections, as a model's would.
 */
function scriptedSummarizer(
  name: string,
  text: (request: SummarizeRequest) => string | undefined,
): Summarizer & { calls: number; failures: number } {
  const extractive = createExtractiveSummarizer();
  const summarizer = {
    name,
    calls: 0,
    failures: 0,
    async summarize(request: SummarizeRequest): Promise<SummaryResult> {
      summarizer.calls++;
      let body: string | undefined;
      try {
        body = text(request);
      } catch (error) {
        summarizer.failures++;
        throw error;
      }
      if (body === undefined) return extractive.summarize(request);
      const sections = SUMMARY_SECTIONS.map(
        (title, index) => `## ${index + 1}. ${title}\n${index === 0 ? body : "- noted"}`,
      );
      return { text: sections.join("\n\n"), inputTokens: 0, outputTokens: 0, calls: 1 };
    },
  };
  return summarizer;
}
