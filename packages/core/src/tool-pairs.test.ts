import { describe, expect, it } from "vitest";
import type { ContentBlock, Message } from "./message.ts";
import {
  findToolPairViolations,
  groupByApiRound,
  MISSING_TOOL_RESULT_TEXT,
  repairToolPairs,
} from "./tool-pairs.ts";

let counter = 0;
const message = (
  role: Message["role"],
  content: ContentBlock[] | string,
  extra: Partial<Message> = {},
): Message => ({
  id: `m${counter++}`,
  role,
  timestamp: "2026-01-01T00:00:00.000Z",
  content: typeof content === "string" ? [{ type: "text", text: content }] : content,
  ...extra,
});
const use = (id: string): ContentBlock => ({ type: "tool_use", id, name: "Bash", input: { command: "ls" } });
const result = (id: string): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: "ok" });

describe("findToolPairViolations", () => {
  it("accepts a valid conversation with parallel tool calls", () => {
    const messages = [
      message("user", "hi"),
      message("assistant", [use("a"), use("b")], { responseId: "r1" }),
      message("user", [result("a"), result("b")]),
      message("assistant", "done", { responseId: "r2" }),
    ];
    expect(findToolPairViolations(messages)).toEqual([]);
  });

  it("names each kind of violation with the message index", () => {
    const messages = [
      message("assistant", [use("a")]),
      message("assistant", [use("a")]),
      message("user", [result("zzz"), use("x")]),
      message("user", []),
    ];
    const kinds = findToolPairViolations(messages).map((v) => [v.kind, v.messageIndex]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        ["first_message_not_user", 0],
        ["dangling_tool_use", 0],
        ["consecutive_same_role", 1],
        ["duplicate_tool_use_id", 1],
        ["dangling_tool_use", 1],
        ["orphan_tool_result", 2],
        ["misplaced_block", 2],
        ["consecutive_same_role", 3],
        ["empty_content", 3],
      ]),
    );
  });

  it("flags a trailing tool_use unless allowed", () => {
    const messages = [message("user", "hi"), message("assistant", [use("a")])];
    expect(findToolPairViolations(messages).map((v) => v.kind)).toEqual(["dangling_tool_use"]);
    expect(findToolPairViolations(messages, { allowTrailingToolUse: true })).toEqual([]);
  });

  it("flags a result that answers a tool_use from an earlier round", () => {
    const messages = [
      message("user", "hi"),
      message("assistant", [use("a")]),
      message("user", [result("a")]),
      message("assistant", "thinking"),
      message("user", [result("a")]),
    ];
    expect(findToolPairViolations(messages).map((v) => v.kind)).toEqual(["orphan_tool_result"]);
  });
});

describe("repairToolPairs", () => {
  it("adds an error result for a dangling tool_use and drops an orphan result, reporting both", () => {
    const messages = [
      message("user", "run it"),
      message("assistant", [use("a"), use("b")]),
      message("user", [result("a"), result("ghost"), { type: "text", text: "also this" }]),
    ];
    const { messages: repaired, repairs, remaining } = repairToolPairs(messages);
    expect(remaining).toEqual([]);
    expect(repairs.map((r) => [r.kind, r.toolUseId])).toEqual([
      ["dropped_orphan_tool_result", "ghost"],
      ["added_missing_tool_result", "b"],
    ]);
    expect(repaired[2]?.content).toEqual([
      result("a"),
      { type: "tool_result", tool_use_id: "b", content: MISSING_TOOL_RESULT_TEXT, is_error: true },
      { type: "text", text: "also this" },
    ]);
  });

  it("inserts a user message with the missing result when the conversation ends on a tool_use", () => {
    const messages = [message("user", "go"), message("assistant", [use("a")])];
    const { messages: repaired, remaining } = repairToolPairs(messages);
    expect(remaining).toEqual([]);
    expect(repaired.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(repaired[2]?.isMeta).toBe(true);
    expect(repaired[2]?.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "a", is_error: true });
    expect(repairToolPairs(messages).messages).toEqual(repaired);
  });

  it("merges consecutive assistant messages before pairing results", () => {
    const messages = [message("user", "go"), message("assistant", [use("a")]), message("assistant", "more")];
    const { messages: repaired, remaining } = repairToolPairs(messages);
    expect(remaining).toEqual([]);
    expect(repaired.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(repaired[1]?.content.map((b) => b.type)).toEqual(["tool_use", "text"]);
  });

  it("merges consecutive user messages keeping tool results first and every text", () => {
    const messages = [
      message("user", "first"),
      message("assistant", [use("a")]),
      message("user", "typed while the tool ran"),
      message("user", [result("a")]),
    ];
    const { messages: repaired, remaining } = repairToolPairs(messages);
    expect(remaining).toEqual([]);
    expect(repaired).toHaveLength(3);
    expect(repaired[2]?.content.map((b) => b.type)).toEqual(["tool_result", "text"]);
    expect(repaired[2]?.metadata?.mergedMessageIds).toHaveLength(1);
  });

  it("moves nothing silently: misplaced blocks are dropped and reported", () => {
    const messages = [message("user", [{ type: "text", text: "q" }, use("x")]), message("assistant", "a")];
    const { repairs, remaining } = repairToolPairs(messages);
    expect(remaining).toEqual([]);
    expect(repairs.map((r) => r.kind)).toEqual(["dropped_misplaced_block"]);
  });

  it("prepends a synthetic user message when the assistant speaks first", () => {
    const { messages: repaired, repairs } = repairToolPairs([message("assistant", "hello")]);
    expect(repaired[0]?.role).toBe("user");
    expect(repaired[0]?.isMeta).toBe(true);
    expect(repairs.map((r) => r.kind)).toEqual(["inserted_leading_user_message"]);
  });
});

describe("meta user messages stay apart from the user's own words", () => {
  it("accepts a meta user message (a demonstration) right before the task, and repair leaves both", () => {
    const messages = [
      message("user", "Here is a demonstration.", { isMeta: true, metadata: { isDemonstration: true } }),
      message("user", "Fix bug 12."),
      message("assistant", "Looking."),
    ];
    expect(findToolPairViolations(messages)).toEqual([]);
    const repaired = repairToolPairs(messages);
    expect(repaired.repairs).toEqual([]);
    const withoutDemonstrations = repaired.messages.filter((kept) => kept.metadata?.isDemonstration !== true);
    expect(withoutDemonstrations.map((kept) => kept.content)).toEqual([
      [{ type: "text", text: "Fix bug 12." }],
      [{ type: "text", text: "Looking." }],
    ]);
  });

  it("still merges tool results that follow a meta message into one turn after the tool_use", () => {
    const messages = [
      message("user", "go"),
      message("assistant", [use("a")]),
      message("user", "[caveat]", { isMeta: true }),
      message("user", [result("a")]),
    ];
    expect(findToolPairViolations(messages).map((violation) => violation.kind)).toContain(
      "consecutive_same_role",
    );
    const repaired = repairToolPairs(messages);
    expect(repaired.remaining).toEqual([]);
    expect(repaired.messages[2]?.content).toEqual([result("a"), { type: "text", text: "[caveat]" }]);
    expect(repaired.repairs.map((repair) => repair.kind)).toEqual(["merged_messages"]);
  });
});

describe("repairToolPairs on degenerate shapes", () => {
  it("merges 40,000 consecutive user messages in linear time (finishes, one message, every block kept)", () => {
    const count = 40_000;
    const messages = Array.from({ length: count }, (_, index) => message("user", `line ${index}`));
    const repaired = repairToolPairs(messages);
    expect(repaired.messages).toHaveLength(1);
    expect(repaired.messages[0]?.content).toHaveLength(count);
    expect(repaired.messages[0]?.metadata?.mergedMessageIds).toHaveLength(count - 1);
    expect(repaired.repairs).toHaveLength(count - 1);
    expect(repaired.remaining).toEqual([]);
  });

  it("merges 40,000 consecutive assistant messages, keeping the last usage and stop reason", () => {
    const count = 40_000;
    const messages = [
      message("user", "go"),
      ...Array.from({ length: count }, (_, index) =>
        message("assistant", `part ${index}`, {
          responseId: `r${index}`,
          usage: {
            inputTokens: index,
            outputTokens: 1,
            cacheCreationInputTokens: 0,
            cacheReadInputTokens: 0,
          },
          stopReason: "end_turn",
        }),
      ),
    ];
    const repaired = repairToolPairs(messages);
    expect(repaired.messages).toHaveLength(2);
    expect(repaired.messages[1]?.content).toHaveLength(count);
    expect(repaired.messages[1]?.usage?.inputTokens).toBe(count - 1);
  });
});

describe("groupByApiRound", () => {
  it("keeps interleaved parallel calls of one response together", () => {
    const messages = [
      message("user", "go"),
      message("assistant", [use("a")], { responseId: "r1" }),
      message("user", [result("a")]),
      message("assistant", [use("b")], { responseId: "r1" }),
      message("user", [result("b")]),
      message("assistant", "done", { responseId: "r2" }),
      message("user", "thanks"),
    ];
    const groups = groupByApiRound(messages);
    expect(groups.map((g) => [g.responseId, g.messages.length])).toEqual([
      ["r1", 5],
      ["r2", 2],
    ]);
  });

  it("treats assistant messages without a response id as separate responses", () => {
    const messages = [
      message("user", "a"),
      message("assistant", "b"),
      message("user", "c"),
      message("assistant", "d"),
    ];
    // A group is a response plus what follows it; leading user messages join the first group.
    expect(groupByApiRound(messages).map((g) => g.messages.length)).toEqual([3, 1]);
  });
});
