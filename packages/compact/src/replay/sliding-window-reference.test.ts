import {
  contentBlocks,
  createMessage,
  findToolPairViolations,
  type Message,
  type RequestMessage,
} from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createSlidingWindowReference } from "./sliding-window-reference.ts";

describe("createSlidingWindowReference", () => {
  it("sends everything until the window is full, then the newest messages that fit, never breaking a pair", () => {
    const sent: RequestMessage[][] = [];
    const reference = createSlidingWindowReference({
      window: 10_000,
      preambleTokens: 1_000,
      countMessage: (message) =>
        contentBlocks(message.content).some((block) => block.type === "tool_result") ? 2_000 : 100,
      bill: (messages) => {
        sent.push(messages);
        return messages.length;
      },
    });
    const history: Message[] = [createMessage("user", "Read every file.")];
    for (let turn = 1; turn <= 30; turn++) {
      history.push(
        createMessage("assistant", [{ type: "tool_use", id: `t${turn}`, name: "Read", input: { turn } }]),
        createMessage("user", [{ type: "tool_result", tool_use_id: `t${turn}`, content: `file ${turn}` }]),
      );
      reference.bill(history, turn);
    }
    expect(sent[0]).toHaveLength(3);
    for (const request of sent) {
      const tokens =
        1_000 +
        request.reduce(
          (sum, message) =>
            sum +
            (contentBlocks(message.content).some((block) => block.type === "tool_result") ? 2_000 : 100),
          0,
        );
      expect(tokens).toBeLessThanOrEqual(10_000);
      expect(request[0]!.role).toBe("user");
      const withIds = request.map((message, index) => ({
        ...message,
        content: contentBlocks(message.content),
        id: `m${index}`,
        timestamp: "",
      }));
      expect(findToolPairViolations(withIds)).toEqual([]);
    }
    // It forgets: the last request no longer holds the user's first message.
    expect(JSON.stringify(sent.at(-1))).not.toContain("Read every file.");
  });
});
