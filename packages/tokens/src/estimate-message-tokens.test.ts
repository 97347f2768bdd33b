import { createMessage, type Message } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  estimateImageTokens,
  estimateMessageBreakdown,
  estimateMessagesTokens,
  estimateMessageTokens,
} from "./estimate-message-tokens.ts";
import { estimateTextTokens, estimateTextTokensExact } from "./estimate-text-tokens.ts";
import { DEFAULT_MEDIA_TOKENS, DEFAULT_MESSAGE_OVERHEAD_TOKENS } from "./token-estimator-options.ts";

const png = { type: "base64" as const, media_type: "image/png", data: "iVBORw0KGgo=" };

describe("estimateImageTokens", () => {
  it("applies width × height / 750 for images within the size limits", () => {
    expect(estimateImageTokens(750, 750, 2_000)).toBe(750);
    expect(estimateImageTokens(200, 100, 2_000)).toBe(Math.ceil(20_000 / 750));
  });

  it("accounts for the API downscaling large images (about 1,600 tokens at most)", () => {
    const tokens = estimateImageTokens(4_000, 3_000, 2_000);
    expect(tokens).toBeLessThanOrEqual(1_534);
    expect(tokens).toBeGreaterThan(1_400);
  });

  it("falls back to the flat estimate without valid dimensions", () => {
    expect(estimateImageTokens(undefined, 100, 1_234)).toBe(1_234);
    expect(estimateImageTokens(0, 100, 1_234)).toBe(1_234);
  });
});

describe("estimateMessageTokens", () => {
  it("counts text plus the per-message overhead", () => {
    const text = "Please read the configuration file and summarise it.";
    expect(estimateMessageTokens(createMessage("user", text))).toBe(
      estimateTextTokens(text) + DEFAULT_MESSAGE_OVERHEAD_TOKENS,
    );
    expect(estimateMessageTokens(createMessage("user", text), { messageOverheadTokens: 0 })).toBe(
      estimateTextTokens(text),
    );
  });

  it("counts a tool_use as its name plus its JSON input", () => {
    const input = { path: "/src/index.ts", pattern: "export function" };
    const message = createMessage("assistant", [{ type: "tool_use", id: "toolu_1", name: "Grep", input }]);
    const breakdown = estimateMessageBreakdown(message);
    const expected = estimateTextTokensExact("Grep") + estimateTextTokensExact(JSON.stringify(input));
    expect(breakdown.contentTokens).toBeCloseTo(expected, 6);
  });

  it("uses the flat media estimate, the image rule, document text and page counts", () => {
    const message = createMessage("user", [
      { type: "image", source: png },
      { type: "image", source: png, width: 750, height: 750 },
      { type: "document", source: { type: "file", file_id: "file_1" } },
      { type: "document", source: { type: "file", file_id: "file_2" }, pages: 3 },
    ]);
    expect(estimateMessageBreakdown(message).mediaTokens).toBe(
      DEFAULT_MEDIA_TOKENS + 750 + DEFAULT_MEDIA_TOKENS + 3 * 2_000,
    );
    expect(
      estimateMessageBreakdown(message, { imageTokens: 10, documentTokens: 20, documentPageTokens: 1 })
        .mediaTokens,
    ).toBe(10 + 750 + 20 + 3);
  });

  it("counts images nested in tool results", () => {
    const message = createMessage("user", [
      {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [{ type: "image", source: png, width: 750, height: 750 }],
      },
    ]);
    expect(estimateMessageBreakdown(message).mediaTokens).toBe(750);
  });

  it("counts thinking separately and caps it at the thinking budget", () => {
    const thinking = "Let me think about which file holds the parser before I answer. ".repeat(30);
    const message = createMessage("assistant", [
      { type: "thinking", thinking, signature: "sig" },
      { type: "text", text: "Done." },
    ]);
    const breakdown = estimateMessageBreakdown(message);
    expect(breakdown.thinkingTokens).toBeGreaterThan(100);
    const rest = breakdown.contentTokens + breakdown.mediaTokens + breakdown.overheadTokens;
    expect(estimateMessageTokens(message)).toBe(Math.ceil(rest + breakdown.thinkingTokens));
    expect(estimateMessageTokens(message, { thinkingBudgetTokens: 0 })).toBe(Math.ceil(rest));
    expect(estimateMessageTokens(message, { thinkingBudgetTokens: 10 })).toBe(Math.ceil(rest + 10));
  });

  it("counts unknown blocks by their JSON and never throws on circular tool input", () => {
    const circular: Record<string, unknown> = { name: "loop" };
    circular.self = circular;
    const message = createMessage("assistant", [
      {
        type: "unknown",
        original: { type: "server_tool_use", name: "web_search", input: { query: "tokens" } },
      },
      { type: "tool_use", id: "toolu_2", name: "Loop", input: circular },
    ]);
    expect(estimateMessageTokens(message)).toBeGreaterThan(DEFAULT_MESSAGE_OVERHEAD_TOKENS + 5);
  });
});

describe("estimateMessagesTokens", () => {
  it("never decreases when a message is appended", () => {
    fc.assert(
      fc.property(arbitraryConversation({ maxRounds: 5 }), (conversation: Message[]) => {
        let previous = 0;
        for (let length = 1; length <= conversation.length; length++) {
          const next = estimateMessagesTokens(conversation.slice(0, length));
          expect(next).toBeGreaterThanOrEqual(previous);
          previous = next;
        }
      }),
      { numRuns: 60 },
    );
  });

  it("is the sum of the per-message estimates (within rounding)", () => {
    fc.assert(
      fc.property(arbitraryConversation({ maxRounds: 4 }), (conversation: Message[]) => {
        const sum = conversation.reduce((total, message) => total + estimateMessageTokens(message), 0);
        const whole = estimateMessagesTokens(conversation);
        expect(whole).toBeLessThanOrEqual(sum);
        expect(whole).toBeGreaterThanOrEqual(sum - conversation.length);
      }),
      { numRuns: 40 },
    );
  });
});
