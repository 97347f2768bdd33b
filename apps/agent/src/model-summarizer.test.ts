import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { describeModelSummaries } from "../test-support/model-summaries.ts";

// A long Claude Code session whose tool outputs are short, so that at 16K the cheap layers cannot free enough
// and summaries are needed: 150 rounds of a question, one Bash call and its answer.
const scratch = mkdtempSync(join(tmpdir(), "unforget-model-summary-session-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function longSession(): string {
  const lines: unknown[] = [];
  let parent: string | null = null;
  let second = 0;
  const line = (uuid: string, fields: Record<string, unknown>) => {
    const time = new Date(Date.UTC(2026, 0, 1, 9, 0, second++)).toISOString();
    lines.push({
      uuid,
      parentUuid: parent,
      sessionId: "long",
      cwd: "/home/dev/shop",
      timestamp: time,
      ...fields,
    });
    parent = uuid;
  };
  for (let round = 1; round <= 150; round++) {
    line(`u${round}`, {
      type: "user",
      message: {
        role: "user",
        content: `Step ${round}: check the rounding for country ${round}.`,
      },
    });
    line(`a${round}a`, {
      type: "assistant",
      message: {
        id: `msg_${round}_a`,
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [
          { type: "text", text: `I'll run the price tests for country ${round}.` },
          {
            type: "tool_use",
            id: `toolu_${round}`,
            name: "Bash",
            input: { command: `npm test -- country-${round}` },
          },
        ],
      },
    });
    line(`r${round}`, {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: `toolu_${round}`, content: `country-${round}: 4 passed` },
        ],
      },
    });
    line(`a${round}b`, {
      type: "assistant",
      message: {
        id: `msg_${round}_b`,
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [
          {
            type: "text",
            text:
              `Country ${round} rounds half up to two decimals, as finance expects; the invoice total is ` +
              "formatted in src/invoice/format-total.ts, which calls the shared money formatter with the " +
              "country's currency and locale. The tests cover whole amounts, amounts ending in five at the third " +
              "decimal, negative refunds and the zero total of a fully discounted order; all of them pass. The " +
              "tax tables were not touched, and the price cache keeps its one-hour lifetime. Nothing to change.",
          },
        ],
      },
    });
  }
  return `${lines.map((entry) => JSON.stringify(entry)).join("\n")}\n`;
}

const session = join(scratch, "long-session.jsonl");
writeFileSync(session, longSession());
describeModelSummaries(session);
