import { createMessage } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import { estimateMessagesTokens, estimateMessageTokens } from "@unforget/tokens";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateOneMessageTokens, estimateTokens } from "./conversation.ts";

describe("estimateTokens", () => {
  it("is estimateMessagesTokens, counted once per message and again from what it remembers", () => {
    fc.assert(
      fc.property(arbitraryConversation(), (messages) => {
        const expected = estimateMessagesTokens(messages);
        expect(estimateTokens(messages)).toBe(expected);
        expect(estimateTokens(messages)).toBe(expected);
        for (const message of messages)
          expect(estimateOneMessageTokens(message)).toBe(estimateMessageTokens(message));
        for (let end = 0; end <= messages.length; end += 3)
          expect(estimateTokens(messages.slice(0, end))).toBe(estimateMessagesTokens(messages.slice(0, end)));
      }),
      { numRuns: 60 },
    );
  });

  it("counts a replacement message (a new object) anew", () => {
    const long = createMessage("user", "word ".repeat(2_000), { id: "u1" });
    const short = { ...long, content: [{ type: "text" as const, text: "word" }] };
    expect(estimateTokens([long])).toBeGreaterThan(estimateTokens([short]));
    expect(estimateTokens([short])).toBe(estimateMessagesTokens([short]));
  });
});
