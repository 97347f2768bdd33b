import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  RemoveMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { ContentBlock, Message } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arbitraryLangChainMessages } from "./__fixtures__/langchain-arbitraries.ts";
import { fromLangChainMessages } from "./decode-langchain-message.ts";
import { toLangChainMessages } from "./encode-langchain-message.ts";

const FIELDS = [
  "content",
  "id",
  "name",
  "additional_kwargs",
  "response_metadata",
  "tool_calls",
  "invalid_tool_calls",
  "usage_metadata",
  "tool_call_id",
  "status",
  "artifact",
  "metadata",
  "role",
] as const;

/** What a LangChain message is: its class and every field a model or a caller reads. */
function view(message: BaseMessage): Record<string, unknown> {
  const record = message as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { class: message.constructor.name, type: message.getType() };
  for (const field of FIELDS) if (record[field] !== undefined) out[field] = record[field];
  return out;
}

/** The blocks of a conversation in order, without the adapter's stash. */
function blocks(messages: readonly Message[]): unknown[] {
  return messages.flatMap((message) =>
    message.content.map((block) => {
      const { langchain: _stash, ...rest } = block as ContentBlock & { langchain?: unknown };
      if (rest.type === "tool_result" && Array.isArray(rest.content))
        return {
          ...rest,
          content: rest.content.map((item) => {
            const { langchain: _inner, ...kept } = item as typeof item & { langchain?: unknown };
            return kept;
          }),
        };
      return rest;
    }),
  );
}

describe("fromLangChainMessages / toLangChainMessages", () => {
  it("gives back every LangChain message exactly, whatever its content and fields (property)", () => {
    fc.assert(
      fc.property(arbitraryLangChainMessages, (messages) => {
        const converted = fromLangChainMessages(messages);
        expect(converted).toHaveLength(messages.length);
        expect(toLangChainMessages(converted).map(view)).toStrictEqual(messages.map(view));
      }),
      { numRuns: 300 },
    );
  });

  it("loses no block of an Unforget conversation on the way through LangChain messages (property)", () => {
    fc.assert(
      fc.property(arbitraryConversation({ maxRounds: 6 }), (conversation) => {
        const back = fromLangChainMessages(toLangChainMessages(conversation));
        expect(blocks(back)).toStrictEqual(blocks(conversation));
      }),
      { numRuns: 200 },
    );
  });

  it("reads what the ladder needs: tool calls, results and their errors, and the usage to anchor on", () => {
    const [ai, tool] = fromLangChainMessages([
      new AIMessage({
        content: "",
        tool_calls: [{ id: "c1", name: "read", args: { path: "a" }, type: "tool_call" }],
        usage_metadata: {
          input_tokens: 1_300,
          output_tokens: 20,
          total_tokens: 1_320,
          input_token_details: { cache_read: 1_000, cache_creation: 200 },
        },
        response_metadata: { id: "msg_9", model_name: "claude-sonnet-4-5" },
      }),
      new ToolMessage({ content: "no such file", tool_call_id: "c1", status: "error" }),
    ]);
    expect(ai).toMatchObject({
      role: "assistant",
      content: [{ type: "tool_use", id: "c1", name: "read", input: { path: "a" } }],
      usage: {
        inputTokens: 100,
        cacheReadInputTokens: 1_000,
        cacheCreationInputTokens: 200,
        outputTokens: 20,
      },
      responseId: "msg_9",
      model: "claude-sonnet-4-5",
    });
    expect(tool).toMatchObject({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c1", content: "no such file", is_error: true }],
    });
  });

  it("sends a result a layer cleared as a tool message with the new content and its own fields", () => {
    const [tool] = fromLangChainMessages([
      new ToolMessage({ id: "t1", content: "x".repeat(50), tool_call_id: "c1", artifact: { rows: 3 } }),
    ]);
    const cleared: Message = {
      ...tool!,
      content: [{ type: "tool_result", tool_use_id: "c1", content: "[cleared]" }],
    };
    const [back] = toLangChainMessages([cleared]);
    expect(view(back!)).toEqual({
      class: "ToolMessage",
      type: "tool",
      id: "t1",
      content: "[cleared]",
      tool_call_id: "c1",
      artifact: { rows: 3 },
      additional_kwargs: {},
      response_metadata: {},
    });
  });

  it("writes a new message in LangChain's own shapes: tool calls in tool_calls, one ToolMessage per result", () => {
    const out = toLangChainMessages([
      {
        id: "a",
        role: "assistant",
        timestamp: "",
        content: [
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "t1", name: "Grep", input: { pattern: "x" } },
        ],
      },
      {
        id: "u",
        role: "user",
        timestamp: "",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "3 matches" },
          { type: "text", text: "also the tests" },
        ],
      },
    ]);
    expect(out.map((message) => message.getType())).toEqual(["ai", "tool", "human"]);
    expect(out[0]).toMatchObject({
      content: "Reading.",
      tool_calls: [{ id: "t1", name: "Grep", args: { pattern: "x" }, type: "tool_call" }],
    });
    expect(out[1]).toMatchObject({ content: "3 matches", tool_call_id: "t1" });
  });

  it("reports each unknown shape and keeps it untouched", () => {
    const remove = new RemoveMessage({ id: "gone" });
    const mystery = { type: "mystery", payload: 1 };
    const shapes: string[] = [];
    const converted = fromLangChainMessages([remove, new HumanMessage({ content: [mystery as never] })], {
      onUnknownShape: (shape) => shapes.push(shape),
    });
    expect(shapes).toEqual(["message type remove", "human content block mystery"]);
    const back = toLangChainMessages(converted);
    expect(back[0]).toBe(remove);
    expect((back[1]!.content as unknown[])[0]).toEqual(mystery);
  });
});
