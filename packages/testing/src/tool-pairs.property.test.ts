import {
  findToolPairViolations,
  getToolResults,
  getToolUses,
  groupByApiRound,
  type Message,
  repairToolPairs,
} from "@unforget/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arbitraryConversation, arbitraryDamagedConversation } from "./arbitraries.ts";

const userTexts = (messages: readonly Message[]): string[] =>
  messages
    .filter((message) => message.role === "user" && !message.isMeta)
    .flatMap((message) => message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])));

describe("generated conversations", () => {
  it("are provider-valid", () => {
    fc.assert(
      fc.property(arbitraryConversation(), (messages) => {
        expect(findToolPairViolations(messages)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe("repairToolPairs", () => {
  it("changes nothing when there are no violations", () => {
    fc.assert(
      fc.property(arbitraryConversation(), (messages) => {
        const result = repairToolPairs(messages);
        expect(result.repairs).toEqual([]);
        expect(result.messages).toEqual(messages);
      }),
      { numRuns: 200 },
    );
  });

  it("leaves no violations in a damaged conversation, and reports every change", () => {
    fc.assert(
      fc.property(arbitraryDamagedConversation(), ({ damaged }) => {
        const before = findToolPairViolations(damaged);
        const result = repairToolPairs(damaged);
        expect(result.remaining).toEqual([]);
        expect(findToolPairViolations(result.messages)).toEqual([]);
        if (before.length > 0) expect(result.repairs.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });

  it("never drops the user's words", () => {
    fc.assert(
      fc.property(arbitraryDamagedConversation(), ({ damaged }) => {
        const repaired = repairToolPairs(damaged).messages;
        const kept = userTexts(repaired);
        for (const text of userTexts(damaged)) expect(kept).toContain(text);
      }),
      { numRuns: 300 },
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(arbitraryDamagedConversation(), ({ damaged }) => {
        const once = repairToolPairs(damaged).messages;
        const twice = repairToolPairs(once);
        expect(twice.repairs).toEqual([]);
        expect(twice.messages).toEqual(once);
      }),
      { numRuns: 200 },
    );
  });

  it("does not modify its input", () => {
    fc.assert(
      fc.property(arbitraryDamagedConversation(), ({ damaged }) => {
        const snapshot = structuredClone(damaged);
        repairToolPairs(damaged);
        expect(damaged).toEqual(snapshot);
      }),
      { numRuns: 100 },
    );
  });
});

describe("groupByApiRound", () => {
  it("partitions the conversation without reordering, one response per group, pairs never split", () => {
    fc.assert(
      fc.property(arbitraryConversation(), (messages) => {
        const groups = groupByApiRound(messages);
        expect(groups.flatMap((group) => group.messages)).toEqual(messages);
        for (const group of groups) {
          const responseIds = new Set(
            group.messages
              .filter((message) => message.role === "assistant")
              .map((message) => message.responseId),
          );
          expect(responseIds.size).toBe(1);
          const useIds = new Set(
            group.messages.flatMap((message) => getToolUses(message).map((use) => use.id)),
          );
          for (const message of group.messages) {
            for (const result of getToolResults(message)) expect(useIds.has(result.tool_use_id)).toBe(true);
          }
        }
        const responses = new Set(messages.filter((m) => m.role === "assistant").map((m) => m.responseId));
        expect(groups).toHaveLength(responses.size);
      }),
      { numRuns: 300 },
    );
  });
});
