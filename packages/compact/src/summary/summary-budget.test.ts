import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { userMessageBudget } from "../conversation/carried-user-messages.ts";
import { continuationBlock } from "../conversation/continuation.ts";
import { readContinuation } from "../conversation/continuation-text.ts";
import { estimateTextTokens } from "../conversation/conversation.ts";
import { SUMMARY_MAX_TOKENS, SUMMARY_MIN_TOKENS, SUMMARY_SHARE } from "../defaults.ts";
import { compactConversation } from "./compact-conversation.ts";
import { createExtractiveSummarizer } from "./extractive-summarizer.ts";
import type { Summarizer } from "./summarizer.ts";

const LAST_USER = "Now make the linter pass too, and keep the public API unchanged.";
const failure = (index: number) => `Error: step ${index} failed: cannot resolve module ./missing-${index}`;

/** A long session: hundreds of calls, four failing commands never run again successfully, two user turns. */
function session(calls: number) {
  const c = conversationBuilder().user("Fix the failing build of the workspace.");
  for (let index = 0; index < calls; index++) {
    if (index === Math.floor(calls / 2)) c.user(LAST_USER);
    if (index % Math.floor(calls / 4) === 3) {
      c.tool(
        "Bash",
        { command: `npm run step-${index}` },
        `${failure(index)}\n    at resolve (x.js:1:1)\nexit 1`,
        {
          isError: true,
        },
      );
    } else {
      c.tool("Read", { file_path: `src/file-${index}.ts` }, filler(120, index));
    }
  }
  return c.messages;
}

/** A summariser that ignores its budget, as a model sometimes does. */
const verbose: Summarizer = {
  name: "verbose",
  async summarize() {
    const text = Array.from({ length: 400 }, (_, line) => `- finding ${line}: ${filler(30, line)}`).join(
      "\n",
    );
    return { text, inputTokens: 0, outputTokens: 0, calls: 1 };
  },
};

/** The summary's budget the pipeline derives from a window (its threshold at most the window). */
const budgetFor = (window: number) =>
  Math.max(SUMMARY_MIN_TOKENS, Math.min(SUMMARY_MAX_TOKENS, Math.floor(window * SUMMARY_SHARE)));

describe("the summary message's budget, every part counted", () => {
  const messages = session(300);
  // Everything up to the last few rounds is summarised, the user's last message with it.
  const upTo = messages.length - 4;
  for (const window of [2_000, 8_000, 32_000, 100_000, 200_000]) {
    for (const summarizer of [createExtractiveSummarizer(), verbose]) {
      it(`fits a ${window.toLocaleString("en-US")}-token window's budget with the ${summarizer.name} summariser (what the system derives, for one that runs over), open errors and the last user message kept`, async () => {
        const budget = budgetFor(window);
        const outcome = await compactConversation(messages, {
          summarizer,
          trigger: "auto",
          summaryMaxTokens: budget,
          userMessageBudgetTokens: userMessageBudget(budget),
          range: { upTo },
          transcriptPath: "/tmp/session.jsonl",
        });
        if (summarizer === verbose) {
          // A summariser that runs over is not cut (the ladder declines or falls back, see its contract): what
          // the system derives still fits the budget, and the summary is there whole.
          expect(outcome.messageText).toContain(outcome.summary);
          const derived = outcome.messageText.replace(outcome.summary, "");
          expect(estimateTextTokens(derived)).toBeLessThanOrEqual(budget);
        } else {
          // The summariser is never asked for less than its floor: at the smallest budgets that floor shows (the
          // extractive summariser's own estimate of its text may be off by a few percent).
          const derived = estimateTextTokens(outcome.messageText.replace(outcome.summary, ""));
          expect(estimateTextTokens(outcome.messageText)).toBeLessThanOrEqual(
            Math.max(budget, derived + Math.ceil(SUMMARY_MIN_TOKENS * 1.1)),
          );
          if (window >= 8_000) expect(estimateTextTokens(outcome.messageText)).toBeLessThanOrEqual(budget);
        }
        expect(outcome.messageText).toContain(LAST_USER);
        for (const index of [3, 78, 153, 228]) expect(outcome.messageText).toContain(failure(index));
        // The replaced calls stay reachable: a count, the first and last ids, and the tools to find the rest.
        const line = outcome.messageText.split("\n").find((text) => text.startsWith("It replaced "))!;
        expect(line).toMatch(/^It replaced 29\d tool calls \(history_read ids toolu_\d+, .*history_search/);
        expect(line.length).toBeLessThan(400);
      });
    }
  }
});

describe("the open errors a continuation carries", () => {
  /** `failures` distinct commands that fail and are never run again successfully. */
  const failing = (failures: number) => {
    const c = conversationBuilder().user("Run every step.");
    for (let index = 0; index < failures; index++) {
      c.tool("Bash", { command: `npm run step-${index}` }, `${failure(index)}\nexit 1`, { isError: true });
    }
    return c.messages;
  };

  it("are bounded however many calls failed: the oldest counted with their ids, each reachable by history", () => {
    const sizes = [40, 400].map((failures) => {
      const block = continuationBlock(failing(failures), [], 100_000)!;
      const read = readContinuation(block)!;
      // The newest are listed by call and id, the newest dozen with their first line; the rest are counted.
      expect(read.openErrors).toHaveLength(24);
      expect(read.earlierErrors.count).toBe(failures - 24);
      expect(read.earlierErrors.ids[0]).toBe("toolu_2");
      expect(block).toContain(failure(failures - 1));
      expect(block).toMatch(
        /earlier open errors; history ids toolu_2, .*: read one with history_read, find the others with history_search\)/,
      );
      return estimateTextTokens(block);
    });
    expect(sizes[1]! - sizes[0]!).toBeLessThan(200);
  });

  it("carry the counted ones on through a later summary", () => {
    const first = continuationBlock(failing(30), [], 100_000)!;
    const summary = {
      ...failing(1)[0]!,
      id: "s1",
      isCompactSummary: true,
      content: [{ type: "text" as const, text: first }],
    };
    const again = readContinuation(continuationBlock([summary], [], 100_000)!)!;
    expect(again.openErrors).toHaveLength(24);
    expect(again.earlierErrors.count).toBe(6);
  });
});
