import { join } from "node:path";
import type { Tool } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { anthropicSuite, modelCalls } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "../loop/agent-session.ts";
import { HISTORY_SYSTEM_NOTE } from "./history-tools.ts";

const suite = anthropicSuite("history-tools");

const lookup: Tool = {
  name: "lookup",
  description: "Looks a key up.",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  async execute(input) {
    return {
      content: `The value of ${String(input.key)} is TANGERINE-${String(input.key).length}7.\n`,
      isError: false,
    };
  },
};

/** The text of the tool result that answers `toolUseId` in the last request. */
function resultOf(toolUseId: string): string {
  const messages = modelCalls(suite.fake).at(-1)?.messages as {
    content: string | { tool_use_id?: string; content?: unknown }[];
  }[];
  const block = messages
    .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
    .find((part) => part.tool_use_id === toolUseId);
  return typeof block?.content === "string" ? block.content : JSON.stringify(block?.content ?? "");
}

describe("the history tools", () => {
  it("find and restore a result byte-exact, and report the context", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [lookup],
      history: true,
      sessionsDir: join(suite.dir.path, "sessions"),
      permissions: { mode: "bypassPermissions" },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "toolu_look_1", name: "lookup", input: { key: "alpha" } }] },
      { kind: "reply", text: "Looked it up." },
    );
    await session.send("Look alpha up.").result();
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "toolu_status", name: "context_status", input: {} }] },
      {
        kind: "reply",
        toolCalls: [{ id: "toolu_search", name: "history_search", input: { query: "alpha value" } }],
      },
      {
        kind: "reply",
        toolCalls: [{ id: "toolu_read", name: "history_read", input: { id: "toolu_look_1" } }],
      },
      { kind: "reply", text: "It was TANGERINE-57." },
    );
    await session.send("What was alpha's value?").result();
    expect(resultOf("toolu_status")).toMatch(/Compactions so far: 0\./);
    expect(resultOf("toolu_search")).toMatch(/id=toolu_look_1 turn 1 lookup/);
    expect(resultOf("toolu_read").split("\n").slice(1).join("\n")).toBe(
      "The value of alpha is TANGERINE-57.\n",
    );
    const request = modelCalls(suite.fake).at(-1)!;
    expect(JSON.stringify(request.system)).toContain(HISTORY_SYSTEM_NOTE.slice(0, 60));
    await session.close();
  });

  it("are not offered unless the session turns them on", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [lookup],
      sessionsDir: join(suite.dir.path, "sessions"),
    });
    suite.fake.enqueue({ kind: "reply", text: "Hi." });
    await session.send("Hi.").result();
    const request = modelCalls(suite.fake).at(-1)!;
    expect((request.tools as { name: string }[]).map((tool) => tool.name)).toEqual(["lookup"]);
    expect(request.system).toBeUndefined();
    await session.close();
  });
});
