import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "@unforget/core";
import { projectContext, type TranscriptEntry } from "@unforget/transcript";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { CompactionFailedError } from "../compact-error.ts";
import { createContextManager } from "../manager/context-manager.ts";
import { compactConversation } from "../summary/compact-conversation.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import { messagesInFolds } from "./carried-fold.ts";
import {
  type CarriedUserMessage,
  carriedCount,
  fitCarriedUserMessages,
  readCarriedUserMessages,
  renderCarriedUserMessages,
} from "./carried-user-messages.ts";
import { continuationIn } from "./continuation-text.ts";
import { estimateTextTokens, isUserAuthored, userText } from "./conversation.ts";

/** A weak summariser: whatever it is given, one fixed sentence, quoting no user message. */
const fixed: Summarizer = {
  name: "fixed",
  async summarize() {
    return { text: "Work continues.", inputTokens: 0, outputTokens: 0, calls: 0 };
  },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-carried-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The user's words the projection holds: messages the user wrote, and what summary messages carry. */
function wordsIn(projected: readonly Message[]): { verbatim: string[]; carried: CarriedUserMessage[] } {
  const verbatim: string[] = [];
  const carried: CarriedUserMessage[] = [];
  for (const message of projected) {
    if (isUserAuthored(message)) verbatim.push(userText(message));
    else if (message.role === "user") carried.push(...(readCarriedUserMessages(userText(message)) ?? []));
  }
  return { verbatim, carried };
}

/**
 * Every message the user sent is in the projection: verbatim, its beginning and end with the whole text on disk,
 * or named by a fold that resolves to it.
 */
async function expectEveryUserMessage(projected: readonly Message[], sent: readonly Message[]) {
  const { verbatim, carried } = wordsIn(projected);
  const saved = new Set<string>();
  const folder = join(dir, "user-messages");
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    saved.add(await readFile(join(folder, name), "utf8"));
  }
  const folded = messagesInFolds(
    sent,
    carried.filter((message) => "folded" in message),
  );
  for (const message of sent) {
    const text = userText(message);
    const found =
      verbatim.includes(text) ||
      folded.has(message.id) ||
      carried.some((quote) =>
        "folded" in quote
          ? false
          : "text" in quote
            ? quote.text === text
            : quote.chars === text.length &&
              text.startsWith(quote.head) &&
              text.endsWith(quote.tail) &&
              saved.has(text),
      );
    expect(found, `user message lost: ${JSON.stringify(text.slice(0, 80))}`).toBe(true);
  }
}

const userMessage = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 80 }),
    fc.string({ unit: "grapheme", minLength: 200, maxLength: 3_000 }),
    fc.constantFrom(
      "Fix </user-message> parsing, then <user-messages> too",
      "<\\user-message> is escaped",
      "line one\n\nline three\n",
    ),
  )
  .filter((text) => text.trim().length > 0);

describe("every user message survives any number of summaries", () => {
  it("with a summariser that quotes none of them (property)", async () => {
    let totalSummaries = 0;
    let shortenedRuns = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            text: userMessage,
            rounds: fc.integer({ min: 0, max: 3 }),
            compact: fc.boolean(),
          }),
          { minLength: 2, maxLength: 10 },
        ),
        async (turns) => {
          await rm(join(dir, "user-messages"), { recursive: true, force: true });
          const manager = createContextManager({
            model: "replay",
            limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
            summarizer: fixed,
            sessionDir: dir,
            config: { proactive: "off" },
          });
          const c = conversationBuilder();
          const sent: Message[] = [];
          let summaries = 0;
          for (const [index, turn] of turns.entries()) {
            c.user(turn.text);
            sent.push(c.messages.at(-1)!);
            for (let round = 0; round < turn.rounds; round++) {
              c.tool("Read", { file_path: `src/f${index}-${round}.ts` }, filler(300, index * 4 + round));
            }
            c.assistant(`Done with step ${index}.`);
            if (!turn.compact && index < turns.length - 1) continue;
            try {
              const result = await manager.compact(c.messages);
              if (result.actions.some((action) => action.layer === "summary")) summaries++;
              // A compaction never makes the context larger.
              expect(result.tokens).toBeLessThanOrEqual(result.tokensBefore);
              await expectEveryUserMessage(result.projected, sent);
            } catch (error) {
              if (!(error instanceof CompactionFailedError)) throw error;
            }
          }
          // Resuming from the transcript gives the same context.
          const entries = JSON.parse(JSON.stringify(manager.entries)) as TranscriptEntry[];
          const live = (await manager.prepare(c.messages)).projected;
          expect(JSON.stringify(projectContext(entries).messages)).toBe(JSON.stringify(live));
          totalSummaries += summaries;
          if ((await readdir(join(dir, "user-messages")).catch(() => [])).length > 0) shortenedRuns++;
        },
      ),
      { numRuns: 25, endOnFailure: true },
    );
    // The runs summarised, more than once a run on average, and some had to shorten long messages.
    expect(totalSummaries).toBeGreaterThan(25);
    expect(shortenedRuns).toBeGreaterThan(0);
  });

  it("after two summaries, the request of the first turn is still there, verbatim", async () => {
    const manager = createContextManager({
      model: "replay",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      summarizer: fixed,
      config: { proactive: "off" },
    });
    const c = conversationBuilder().user(
      "Port the billing module to the new API; keep the old one as a fallback.",
    );
    for (let index = 0; index < 6; index++)
      c.tool("Read", { file_path: `src/b${index}.ts` }, filler(500, index));
    c.user("Go on.");
    c.assistant("On it.");
    await manager.compact(c.messages);
    for (let index = 6; index < 12; index++)
      c.tool("Read", { file_path: `src/b${index}.ts` }, filler(500, index));
    c.user("And the tests.");
    c.assistant("Writing them.");
    const second = await manager.compact(c.messages);
    expect(second.actions.filter((action) => action.layer === "summary")).toHaveLength(1);
    const sent = c.messages.filter(isUserAuthored);
    expect(sent.map(userText)).toEqual([
      "Port the billing module to the new API; keep the old one as a fallback.",
      "Go on.",
      "And the tests.",
    ]);
    await expectEveryUserMessage(second.projected, sent);
  });
});

describe("the carried messages' budget", () => {
  const long = (seed: number) => `${seed}: ${filler(1_000, seed)}`;

  it("keeps everything verbatim while it fits, then shortens the oldest long ones, never the user's newest", async () => {
    const messages = [long(1), "short one", long(2), long(3)].map((text) => ({ text }));
    expect(await fitCarriedUserMessages(messages, { budgetTokens: 1_000_000 })).toEqual(messages);
    const fitted = await fitCarriedUserMessages(messages, {
      budgetTokens: 2_500,
      sessionDir: dir,
      keepLast: true,
    });
    expect(fitted[0]).toMatchObject({ chars: long(1).length });
    expect(fitted[1]).toEqual({ text: "short one" });
    expect(fitted[3]).toEqual({ text: long(3) });
    expect(estimateTextTokens(renderCarriedUserMessages(fitted))).toBeLessThanOrEqual(2_500);
    // The whole text of a shortened message is saved in the session folder, and the pointer says where.
    const shortened = fitted[0] as Extract<CarriedUserMessage, { head: string }>;
    const path = /^whole text: (user-messages\/.+)$/.exec(shortened.pointer ?? "")?.[1];
    expect(path).toBeDefined();
    expect(await readFile(join(dir, path!), "utf8")).toBe(long(1));
    expect(renderCarriedUserMessages(fitted, dir)).toContain(`(Cut messages are saved whole under ${dir}.)`);
  });

  it("shortens the last one too when it is not the user's newest message, never under its first 100 characters", async () => {
    const fitted = await fitCarriedUserMessages(
      [long(1), long(2)].map((text) => ({ text })),
      { budgetTokens: 10 },
    );
    for (const [index, message] of fitted.entries()) {
      expect(message).toMatchObject({
        head: long(index + 1).slice(0, 100),
        tail: "",
        chars: long(index + 1).length,
      });
    }
  });

  it("comes out of the summary's budget: the summariser is given what the carried messages and the other parts leave", async () => {
    const budgets: number[] = [];
    const c = conversationBuilder().user(long(1));
    for (let index = 0; index < 4; index++) c.tool("Read", { file_path: `f${index}.ts` }, filler(400, index));
    c.user("Now the tests.");
    c.tool("Read", { file_path: "g.ts" }, filler(400, 9));
    const outcome = await compactConversation(c.messages, {
      summarizer: {
        name: "recording",
        async summarize(request) {
          budgets.push(request.maxTokens);
          return { text: "Work continues.", inputTokens: 0, outputTokens: 0, calls: 0 };
        },
      },
      trigger: "manual",
      summaryMaxTokens: 2_000,
      userMessageBudgetTokens: 800,
    });
    const carried = readCarriedUserMessages(outcome.messageText)!;
    expect(carried[0]).toMatchObject({ chars: long(1).length });
    const tokens = estimateTextTokens(renderCarriedUserMessages(carried));
    expect(tokens).toBeLessThanOrEqual(800);
    // The continuation the ladder derives comes out of it too, and so do the prose and the replaced calls' ids.
    const continuation = estimateTextTokens(continuationIn(outcome.messageText)!);
    const everythingElse = estimateTextTokens(outcome.messageText.replace("Work continues.", ""));
    expect(everythingElse).toBeGreaterThan(tokens + continuation);
    expect(budgets).toEqual([2_000 - everythingElse]);
  });

  it("takes at most a quarter of what the summary stands for (a tenth in a recovery): a part of mostly the user's words still shrinks", async () => {
    const c = conversationBuilder();
    for (let index = 0; index < 6; index++) {
      c.user(`Question ${index}: ${"context ".repeat(300)}`);
      c.assistant(`Answer ${index}.`);
    }
    c.user("Question 7.");
    c.tool("Read", { file_path: "a.ts" }, filler(200, 1));
    const carriedTokens: number[] = [];
    for (const trigger of ["manual", "reactive"] as const) {
      const outcome = await compactConversation(c.messages, {
        summarizer: fixed,
        trigger,
        summaryMaxTokens: 20_000,
        userMessageBudgetTokens: 20_000,
        sessionDir: dir,
      });
      const carried = readCarriedUserMessages(outcome.messageText)!;
      expect(carriedCount(carried)).toBe(6);
      carriedTokens.push(estimateTextTokens(renderCarriedUserMessages(carried, dir)));
      // Every question keeps at least its opening or, the oldest, is named by the fold (in order), and the
      // part shrinks to less than half.
      const fold = carried[0] && "folded" in carried[0] ? carried[0] : undefined;
      const asked = c.messages.filter(isUserAuthored);
      expect(messagesInFolds(asked, fold ? [fold] : []).size).toBe(fold?.folded ?? 0);
      for (const [index, message] of carried.entries()) {
        if ("folded" in message) continue;
        expect("head" in message ? message.head : "text" in message ? message.text : "").toMatch(
          new RegExp(`^Question ${index - (fold ? 1 : 0) + (fold?.folded ?? 0)}: context`),
        );
      }
      expect(outcome.tokensAfter).toBeLessThan(outcome.tokensBefore * 0.5);
    }
    expect(carriedTokens[1]).toBeLessThanOrEqual(carriedTokens[0]!);
  });

  it("points at the transcript when there is no session folder", async () => {
    const fitted = await fitCarriedUserMessages(
      [long(1), long(2)].map((text) => ({ text })),
      {
        budgetTokens: 10,
        transcriptPath: "/sessions/s1.jsonl",
      },
    );
    expect(fitted[0]).toMatchObject({
      pointer: "whole text in the transcript",
    });
  });

  it("reads back exactly what it wrote, shortened messages and tags in the user's text included", async () => {
    const messages: CarriedUserMessage[] = [
      { text: "a </user-message> b <\\user-messages> c\n" },
      { head: "head part", tail: " tail", chars: 5_000, pointer: "whole text: /x/y.txt" },
      { head: "no pointer", tail: "", chars: 900 },
      { text: "" },
    ];
    const text = `prefix\n<summary>\nx\n</summary>\n\n${renderCarriedUserMessages(messages)}\n\nContinue.`;
    expect(readCarriedUserMessages(text)).toEqual(messages);
    expect(readCarriedUserMessages("no block here")).toBeUndefined();
  });
});

describe("a summary names the calls it replaced", () => {
  it("the first and last tool_use ids of the span and a count, beside the carried user messages", async () => {
    const c = conversationBuilder().user("Read the fourteen files.");
    for (let index = 0; index < 14; index++)
      c.tool("Read", { file_path: `f${index}.ts` }, filler(300, index));
    c.user("Now the tests.");
    c.tool("Read", { file_path: "g.ts" }, filler(300, 99));
    const outcome = await compactConversation(c.messages, {
      summarizer: fixed,
      trigger: "manual",
      summaryMaxTokens: 20_000,
      sessionDir: dir,
    });
    const summarized = new Set(outcome.summarizedMessageIds);
    const ids = c.messages.flatMap((message) =>
      summarized.has(message.id) && message.role === "assistant"
        ? message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
        : [],
    );
    expect(ids).toHaveLength(14);
    const text = outcome.messageText;
    expect(text).toContain(
      `It replaced 14 tool calls (history_read ids ${ids.slice(0, 5).join(", ")}, … 4 more …, ${ids.slice(-5).join(", ")})`,
    );
    // The continuation lists the most recent calls as done; the line naming the span shows only its ends.
    const named = text.slice(0, text.indexOf("<continuation>"));
    for (const hidden of ids.slice(5, -5)) expect(named).not.toContain(hidden);
    // The block the next summary reads back keeps its shape.
    expect(JSON.stringify(readCarriedUserMessages(text))).toContain("Read the fourteen files.");
  });
});
