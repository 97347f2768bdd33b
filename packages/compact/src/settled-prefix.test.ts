import { createMessage, type Message } from "@unforget/core";
import { toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { collapseContext } from "./collapse-context.ts";
import { settledBlocks, settledMessages } from "./settled-prefix.ts";

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
    const blocks = settledBlocks(folded, request);
    expect(blocks).toBe(2);
    expect(
      request[0]!.content.map((block) => (block.type === "text" ? block.text.slice(0, 20) : block.type)),
    ).toEqual(["Audit the modules.", "[Earlier tool activi"]);
  });

  it("is empty before anything was compacted, and counts only blocks the request starts with", () => {
    expect(settledBlocks(rounds(3), toRequestMessages(rounds(3)))).toBe(1);
    expect(settledBlocks([], [])).toBe(0);
    // A request that does not start with the settled messages settles nothing.
    expect(settledBlocks(rounds(3), toRequestMessages(rounds(2).slice(1)))).toBe(0);
  });
});
