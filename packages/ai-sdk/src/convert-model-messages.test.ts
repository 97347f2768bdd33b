import type { ContentBlock, Message } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import type { ModelMessage } from "ai";
import { modelMessageSchema } from "ai";
import { modelMessageSchema as modelMessageSchemaV6 } from "ai-v6";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arbitraryModelMessages } from "./__fixtures__/model-message-arbitraries.ts";
import { fromModelMessages, toModelMessages } from "./convert-model-messages.ts";
import { DENIED_TOOL_RESULT } from "./model-message-parts.ts";

/** The blocks of a conversation in order, without what only the adapter adds (the `aiSdk` stash). */
function blocks(messages: readonly Message[]): unknown[] {
  return messages.flatMap((message) =>
    message.content.map((block) => {
      const { aiSdk: _stash, ...rest } = block as ContentBlock & { aiSdk?: unknown };
      if (rest.type === "tool_result" && Array.isArray(rest.content))
        return {
          ...rest,
          content: rest.content.map((item) => {
            const { aiSdk: _inner, ...kept } = item as typeof item & { aiSdk?: unknown };
            return kept;
          }),
        };
      return rest;
    }),
  );
}

describe("fromModelMessages / toModelMessages", () => {
  it("gives back every AI SDK message exactly, whatever its parts (property)", () => {
    fc.assert(
      fc.property(arbitraryModelMessages, (messages) => {
        const unknown: string[] = [];
        const converted = fromModelMessages(messages, { onUnknownShape: (shape) => unknown.push(shape) });
        expect(converted).toHaveLength(messages.length);
        expect(toModelMessages(converted)).toStrictEqual(messages);
      }),
      { numRuns: 300 },
    );
  });

  it("loses no block of an Unforget conversation on the way through AI SDK messages (property)", () => {
    fc.assert(
      fc.property(arbitraryConversation({ maxRounds: 6 }), (conversation) => {
        const there = toModelMessages(conversation);
        const back = fromModelMessages(there);
        expect(blocks(back)).toStrictEqual(blocks(conversation));
      }),
      { numRuns: 200 },
    );
  });

  it("writes AI SDK messages that the AI SDK 7 and 6 schemas accept, for any Unforget conversation (property)", () => {
    fc.assert(
      fc.property(arbitraryConversation({ maxRounds: 4 }), (conversation) => {
        for (const message of toModelMessages(conversation)) {
          expect(modelMessageSchema.safeParse(message).success).toBe(true);
          expect(modelMessageSchemaV6.safeParse(message).success).toBe(true);
        }
      }),
      { numRuns: 100 },
    );
  });

  it("maps what the ladder reads onto Unforget's fields: cache control, signatures, errors, images", () => {
    const messages: ModelMessage[] = [
      {
        role: "user",
        content: [
          {
            type: "text",
            text: "Look at this",
            providerOptions: { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } },
          },
          { type: "image", image: new Uint8Array([1, 2, 3]), mediaType: "image/png" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hmm", providerOptions: { anthropic: { signature: "sig" } } },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "read",
            output: { type: "error-json", value: { code: "ENOENT" } },
          },
        ],
      },
    ];
    const [user, assistant, tool] = fromModelMessages(messages);
    expect(user?.content).toMatchObject([
      { type: "text", text: "Look at this", cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AQID" } },
    ]);
    expect(assistant?.content).toMatchObject([
      { type: "thinking", thinking: "hmm", signature: "sig" },
      { type: "tool_use", id: "c1", name: "read", input: { path: "a" } },
    ]);
    expect(tool).toMatchObject({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c1", content: '{"code":"ENOENT"}', is_error: true }],
    });
  });

  it("sends a result a layer cleared as text, and keeps a denial's reason", () => {
    const [, , tool] = fromModelMessages([
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "json", value: [1] } },
        ],
      },
    ]);
    const cleared: Message = {
      ...tool!,
      content: tool!.content.map((block) =>
        block.type === "tool_result" ? { ...block, content: "[Old tool result content cleared]" } : block,
      ),
    };
    expect(toModelMessages([cleared])).toStrictEqual([
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "read",
            output: { type: "text", value: "[Old tool result content cleared]" },
          },
        ],
      },
    ]);
    const [denied] = fromModelMessages([
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c2", toolName: "bash", output: { type: "execution-denied" } },
        ],
      },
    ]);
    expect(denied?.content[0]).toMatchObject({ is_error: true, content: DENIED_TOOL_RESULT });
  });

  it("puts tool results first when an Unforget user message also holds text, and names tools from their calls", () => {
    const out = toModelMessages([
      {
        id: "a",
        role: "assistant",
        timestamp: "",
        content: [{ type: "tool_use", id: "t1", name: "Grep", input: {} }],
      },
      {
        id: "u",
        role: "user",
        timestamp: "",
        content: [
          { type: "text", text: "also check the tests" },
          { type: "tool_result", tool_use_id: "t1", content: "3 matches" },
        ],
      },
    ]);
    expect(out.map((message) => message.role)).toEqual(["assistant", "tool", "user"]);
    expect(out[1]).toMatchObject({
      content: [{ toolName: "Grep", output: { type: "text", value: "3 matches" } }],
    });
  });

  it("reports each unknown shape and keeps it untouched", () => {
    const odd = { role: "developer", content: "be brief" } as unknown as ModelMessage;
    const mystery = { type: "mystery", payload: 1 };
    const shapes: string[] = [];
    const messages = [odd, { role: "assistant", content: [mystery] } as unknown as ModelMessage];
    const converted = fromModelMessages(messages, { onUnknownShape: (shape) => shapes.push(shape) });
    expect(shapes).toEqual(["message role developer", "assistant part mystery"]);
    const back = toModelMessages(converted);
    expect(back[0]).toBe(odd);
    expect((back[1]!.content as unknown[])[0]).toBe(mystery);
  });
});
