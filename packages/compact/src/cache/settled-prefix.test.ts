import { contentBlocks, createMessage, type Message } from "@unforget/core";
import { toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { collapseContext } from "../layers/collapse-context.ts";
import { createSettledTracker, settledBlocks, settledMessages } from "./settled-prefix.ts";

function rounds(count: number): Message[] {
  const messages: Message[] = [createMessage("user", "Audit the modules.", { id: "u0" })];
  for (let round = 1; round <= count; round++) {
    messages.push(
      createMessage(
        "assistant",
        [{ type: "tool_use", id: `t${round}`, name: "Read", input: { file_path: `m${round}.ts` } }],
        { id: `a${round}` },
      ),
      createMessage(
        "user",
        [{ type: "tool_result", tool_use_id: `t${round}`, content: `module ${round}\n`.repeat(40) }],
        { id: `o${round}` },
      ),
    );
  }
  return messages;
}

describe("settled prefix", () => {
  it("ends at the first round a cheap layer could still fold", () => {
    const messages = rounds(6);
    expect(settledMessages(messages)).toBe(1);
    const folded = collapseContext(messages, { protectRounds: 2 }).messages;
    // The task and the folded records are settled; the two protected rounds are not.
    expect(settledMessages(folded)).toBe(folded.length - 4);
    const request = toRequestMessages(folded);
    const blocks = settledBlocks(folded);
    expect(blocks).toBe(2);
    expect(
      contentBlocks(request[0]!.content).map((block) =>
        block.type === "text" ? block.text.slice(0, 20) : block.type,
      ),
    ).toEqual(["Audit the modules.", "[Earlier tool activi"]);
  });

  it("counts only whole request messages: a settled message merged with an unsettled one is left out", () => {
    expect(settledBlocks(rounds(3))).toBe(1);
    expect(settledBlocks([])).toBe(0);
    // The task, then a user message that is not settled: the request merges them into one message.
    const merged = [rounds(1)[0]!, createMessage("user", "Also check m9.ts."), ...rounds(2).slice(1)];
    expect(settledMessages(merged)).toBe(2);
    expect(settledBlocks(merged)).toBe(2);
    const unsettled = [rounds(1)[0]!, ...rounds(2).slice(1)];
    const withObservation = [
      ...unsettled.slice(0, 1),
      createMessage("user", "output of ls", { isObservation: true }),
      ...unsettled.slice(1),
    ];
    // The observation can still be cleared and merges with the task: nothing is settled.
    expect(settledMessages(withObservation)).toBe(1);
    expect(settledBlocks(withObservation)).toBe(0);
  });
});

describe("createSettledTracker", () => {
  it("answers as settledMessages does while a conversation grows and is compacted", () => {
    const track = createSettledTracker();
    let messages = rounds(1).slice(0, 1);
    expect(track(messages)).toBe(settledMessages(messages));
    for (let round = 1; round <= 8; round++) {
      messages = [...messages, ...rounds(round).slice(-2)];
      if (round === 5) messages = collapseContext(messages, { protectRounds: 2 }).messages;
      expect(track(messages)).toBe(settledMessages(messages));
    }
    // A conversation of outputs no layer may clear: settled throughout, looked at only where it grew.
    const calls: Message[] = [createMessage("user", "Plan the work.", { id: "p0" })];
    for (let step = 1; step <= 5; step++) {
      calls.push(
        createMessage("assistant", [{ type: "tool_use", id: `q${step}`, name: "AskUser", input: {} }], {
          id: `q${step}`,
        }),
        createMessage("user", [{ type: "tool_result", tool_use_id: `q${step}`, content: "yes" }], {
          id: `y${step}`,
        }),
      );
      expect(track(calls)).toBe(calls.length);
    }
  });
});
