import { type CountTokensRequest, createMessage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { estimateMessagesTokens } from "./estimate-message-tokens.ts";
import { estimateRequestTokens } from "./estimate-request-tokens.ts";

const base: CountTokensRequest = {
  model: "claude-sonnet-4-5",
  system: "You are a careful coding agent. Prefer small, tested changes.",
  messages: [createMessage("user", "List the files in the repository and explain the layout.")],
};

describe("estimateRequestTokens", () => {
  it("pads the unpadded estimate by 4/3 by default and by the configured factor otherwise", () => {
    const unpadded = estimateRequestTokens(base, { padding: 1 });
    expect(Math.abs(estimateRequestTokens(base) - unpadded * (4 / 3))).toBeLessThanOrEqual(2);
    expect(Math.abs(estimateRequestTokens(base, { padding: 2 }) - unpadded * 2)).toBeLessThanOrEqual(2);
  });

  it("counts the system prompt (string or blocks), messages and tool definitions", () => {
    const withoutSystem = estimateRequestTokens({ ...base, system: undefined }, { padding: 1 });
    expect(estimateRequestTokens(base, { padding: 1 })).toBeGreaterThan(withoutSystem + 5);
    expect(
      estimateRequestTokens(
        { ...base, system: [{ type: "text", text: base.system as string }] },
        { padding: 1 },
      ),
    ).toBe(estimateRequestTokens(base, { padding: 1 }));
    expect(withoutSystem).toBeGreaterThanOrEqual(estimateMessagesTokens(base.messages));
    const withTool = estimateRequestTokens(
      {
        ...base,
        tools: [
          {
            name: "read_file",
            description: "Read a file from the workspace.",
            inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
          },
        ],
      },
      { padding: 1 },
    );
    expect(withTool).toBeGreaterThan(estimateRequestTokens(base, { padding: 1 }) + 15);
  });

  it("never throws on malformed input from untyped callers", () => {
    const malformed = {
      model: "x",
      messages: [{ role: "user", content: null }],
    } as unknown as CountTokensRequest;
    expect(estimateRequestTokens(malformed)).toBeGreaterThan(0);
  });
});
