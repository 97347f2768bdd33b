import { describe, expect, it } from "vitest";
import { createMessage, getMessageText, normalizeContent, usageContextTokens } from "./message.ts";

describe("message model", () => {
  it("preserves unknown and malformed blocks instead of dropping them", () => {
    const content = normalizeContent([
      "plain",
      { type: "server_tool_use", id: "s1", name: "web_search", input: { q: "x" } },
      { type: "tool_use", name: "missing id" },
      { type: "compaction", content: "summary" },
      42,
    ]);
    expect(content.map((block) => block.type)).toEqual(["text", "unknown", "unknown", "unknown", "unknown"]);
    expect(content[1]).toEqual({
      type: "unknown",
      original: { type: "server_tool_use", id: "s1", name: "web_search", input: { q: "x" } },
    });
    expect(normalizeContent(content)).toEqual(content);
  });

  it("counts every usage field toward window occupancy", () => {
    expect(
      usageContextTokens({
        inputTokens: 3,
        outputTokens: 5,
        cacheCreationInputTokens: 100,
        cacheReadInputTokens: 1000,
      }),
    ).toBe(1108);
  });

  it("builds messages with ids and extracts text", () => {
    const message = createMessage("user", [
      { type: "text", text: "a" },
      { type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "b" }] },
    ]);
    expect(message.id).toMatch(/^msg_/);
    expect(getMessageText(message)).toBe("a\nb");
    expect(normalizeContent([{ type: "tool_result", tool_use_id: "t" }])).toEqual([
      { type: "tool_result", tool_use_id: "t", content: "" },
    ]);
  });
});
