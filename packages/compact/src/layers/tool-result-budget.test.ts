import { createMessage, type Message } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { applyToolResultBudget } from "./tool-result-budget.ts";

/** One assistant message asking for `count` calls, and their results, in one message or one message each. */
function parallelRound(count: number, chars: number, split: boolean): Message[] {
  const ids = Array.from({ length: count }, (_, index) => `toolu_${index}`);
  const assistant = createMessage(
    "assistant",
    ids.map((id, index) => ({ type: "tool_use" as const, id, name: "fetch", input: { part: index } })),
    { id: "a1" },
  );
  const results = ids.map((id, index) => ({
    type: "tool_result" as const,
    tool_use_id: id,
    content: `part ${index}\n${"row of the report\n".repeat(Math.ceil(chars / 18))}`,
  }));
  const answers = split
    ? results.map((block, index) => createMessage("user", [block], { id: `r${index}` }))
    : [createMessage("user", results, { id: "r" })];
  return [createMessage("user", "Fetch the eight parts.", { id: "u1" }), assistant, ...answers];
}

const chars = (messages: readonly Message[]) =>
  messages.reduce(
    (sum, message) =>
      sum +
      message.content.reduce(
        (inner, block) =>
          inner +
          (block.type === "tool_result" && typeof block.content === "string" ? block.content.length : 0),
        0,
      ),
    0,
  );

describe("the tool-result budget keeps room for parallel results", () => {
  it.each([
    ["in one message", false],
    ["one message each (as LangChain and OpenAI-style hosts send them)", true],
  ])("eight results of one round, %s, share one message's limit", async (_name, split) => {
    const messages = parallelRound(8, 5_000, split);
    const result = await applyToolResultBudget(messages, { maxResultChars: 6_000, maxMessageChars: 16_000 });
    expect(chars(messages)).toBeGreaterThan(40_000);
    expect(chars(result.messages)).toBeLessThanOrEqual(16_000);
    expect(result.messages.map((message) => message.id)).toEqual(messages.map((message) => message.id));
  });
});
