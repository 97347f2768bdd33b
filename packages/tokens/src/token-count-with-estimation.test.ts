import { createMessage, createUsage, type Message, usageContextTokens } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateMessagesTokens } from "./estimate-message-tokens.ts";
import { createTokenCountSession } from "./token-count-session.ts";
import {
  findUsageAnchor,
  measureContextTokens,
  tokenCountWithEstimation,
} from "./token-count-with-estimation.ts";

const usage = createUsage({
  inputTokens: 1_000,
  cacheCreationInputTokens: 200,
  cacheReadInputTokens: 30_000,
  outputTokens: 150,
});

function toolUse(id: string, responseId: string, withUsage: boolean): Message {
  return createMessage(
    "assistant",
    [{ type: "tool_use", id, name: "Read", input: { path: `/src/${id}.ts` } }],
    {
      responseId,
      ...(withUsage ? { usage } : {}),
    },
  );
}

function toolResult(id: string, text: string): Message {
  return createMessage("user", [{ type: "tool_result", tool_use_id: id, content: text }]);
}

describe("tokenCountWithEstimation", () => {
  it("without any usage, is the padded estimate of all messages plus the preamble", () => {
    const messages = [
      createMessage("user", "Summarise the README."),
      createMessage("assistant", "It explains the build."),
    ];
    const unpadded = estimateMessagesTokens(messages);
    const counted = measureContextTokens(messages, { preambleTokens: 500 });
    expect(counted.method).toBe("heuristic");
    expect(counted.anchorIndex).toBe(-1);
    expect(Math.abs(counted.tokens - 500 - unpadded * (4 / 3))).toBeLessThanOrEqual(messages.length + 1);
  });

  it("anchors on the full window occupancy: input + cache creation + cache read + output", () => {
    const messages = [
      createMessage("user", "Hi"),
      createMessage("assistant", "Hello", { responseId: "r1", usage }),
    ];
    const counted = measureContextTokens(messages);
    expect(counted.method).toBe("usage-anchored");
    expect(counted.anchorTokens).toBe(usageContextTokens(usage));
    expect(counted.tokens).toBe(31_350);
  });

  it("walks back over parallel tool calls that share a response id to the first of them", () => {
    const messages = [
      createMessage("user", "Read both files."),
      toolUse("a", "resp_1", false),
      toolResult("a", "first file contents ".repeat(50)),
      toolUse("b", "resp_1", true),
      toolResult("b", "second file contents ".repeat(50)),
    ];
    expect(findUsageAnchor(messages)).toBe(1);
    const counted = measureContextTokens(messages);
    expect(counted.anchorIndex).toBe(1);
    // Everything after the first split message is estimated, including the first tool result.
    const tail = estimateMessagesTokens(messages.slice(2));
    expect(Math.abs(counted.estimatedTokens - tail * (4 / 3))).toBeLessThanOrEqual(4);
    expect(counted.tokens).toBe(usageContextTokens(usage) + counted.estimatedTokens);
    // Stopping at the last split message would have missed the first tool result.
    const naive = usageContextTokens(usage) + Math.ceil(estimateMessagesTokens(messages.slice(4)) * (4 / 3));
    expect(counted.tokens).toBeGreaterThan(naive + 50);
  });

  it("does not walk past an assistant message from a different response", () => {
    const messages = [
      createMessage("user", "Go."),
      toolUse("a", "resp_0", true),
      toolResult("a", "ok"),
      toolUse("b", "resp_1", true),
      toolResult("b", "ok"),
    ];
    expect(findUsageAnchor(messages)).toBe(3);
  });

  it("never decreases when messages are appended after the anchor", () => {
    fc.assert(
      fc.property(arbitraryConversation({ maxRounds: 6 }), fc.string(), (conversation: Message[], extra) => {
        const before = tokenCountWithEstimation(conversation);
        const after = tokenCountWithEstimation([...conversation, createMessage("user", extra)]);
        expect(after).toBeGreaterThanOrEqual(before);
      }),
      { numRuns: 60 },
    );
  });
});

describe("createTokenCountSession", () => {
  it("gives exactly the non-incremental result at every step of a growing conversation", () => {
    fc.assert(
      fc.property(
        arbitraryConversation({ maxRounds: 8, maxParallelToolCalls: 3 }),
        (conversation: Message[]) => {
          const session = createTokenCountSession();
          for (let length = 0; length <= conversation.length; length++) {
            const prefix = conversation.slice(0, length);
            const incremental = session.count(prefix);
            const direct = measureContextTokens(prefix);
            expect(incremental.anchorIndex).toBe(direct.anchorIndex);
            expect(incremental.anchorTokens).toBe(direct.anchorTokens);
            expect(Math.abs(incremental.tokens - direct.tokens)).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("estimates only the new messages on each turn", () => {
    const seen = new Set<unknown>();
    const counting: Message[] = [];
    const track = (message: Message): Message =>
      new Proxy(message, {
        get(target, property, receiver) {
          if (property === "content") seen.add(target);
          return Reflect.get(target, property, receiver);
        },
      });
    const session = createTokenCountSession();
    for (let turn = 0; turn < 20; turn++) {
      counting.push(track(createMessage("user", `question ${turn}`)));
      counting.push(track(createMessage("assistant", `answer ${turn}`, { responseId: `r${turn}`, usage })));
      seen.clear();
      session.count(counting);
      expect(seen.size).toBeLessThanOrEqual(2);
    }
  });

  it("re-estimates a message after the anchor that was replaced by a new object with the same id", () => {
    const session = createTokenCountSession();
    const question = createMessage("user", "read the log");
    const call = toolUse("t1", "r1", true);
    const result = toolResult("t1", "log line ".repeat(2_000));
    const next = createMessage("user", "and now?");
    session.count([question, call, result, next]);
    // The tool-result budget swaps the large result for a preview, keeping the message id.
    const preview = {
      ...result,
      content: [{ type: "tool_result" as const, tool_use_id: "t1", content: "[saved]" }],
    };
    const edited = [question, call, preview, next];
    const direct = measureContextTokens(edited);
    expect(session.count(edited).tokens).toBe(direct.tokens);
    expect(session.count([...edited, createMessage("user", "more")]).tokens).toBe(
      measureContextTokens([...edited, createMessage("user", "more")]).tokens,
    );
  });

  it("recounts from scratch when the list was rewritten (compaction)", () => {
    const session = createTokenCountSession();
    const long = [createMessage("user", "x ".repeat(5_000)), createMessage("assistant", "done")];
    session.count(long);
    const compacted = [createMessage("user", "summary of the work so far")];
    expect(session.count(compacted).tokens).toBe(tokenCountWithEstimation(compacted));
  });
});
