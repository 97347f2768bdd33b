import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { createExtractiveSummarizer } from "@unforget/compact";
import { ConfigurationError } from "@unforget/core";
import { HISTORY_TOOLS_NOTE } from "@unforget/history";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { createAgent, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createScriptedChatModel } from "./__fixtures__/scripted-chat-model.ts";
import { createContextMiddleware } from "./context-middleware.ts";

const READS = 40;
const MARKER = "build id HX-5521";

/** The text of the last tool message the model received. */
function lastToolResult(messages: readonly BaseMessage[]): string {
  const message = messages.findLast((entry) => entry.getType() === "tool");
  return typeof message?.content === "string" ? message.content : JSON.stringify(message?.content);
}

describe.each(["state", "request"] as const)("history tools through the middleware (%s mode)", (mode) => {
  it("a scripted model finds a cleared result with history_search and gets its original bytes from history_read", async () => {
    const outputs: string[] = [];
    const read = tool(
      async () => {
        const lines = syntheticToolOutput(outputs.length + 1, 600).split("\n");
        if (outputs.length === 1) lines.splice(30, 0, MARKER);
        outputs.push(lines.join("\n"));
        return outputs.at(-1)!;
      },
      { name: "Read", description: "Reads a file", schema: z.object({ path: z.string() }) },
    );
    let searched = "";
    let restored = "";
    let beforeSearch = "";
    const { model, calls } = createScriptedChatModel((messages, call) => {
      if (call <= READS) return { tool: "Read", args: { path: `src/file${call}.ts` } };
      if (call === READS + 1) {
        beforeSearch = JSON.stringify(messages);
        return { tool: "history_search", args: { query: "HX-5521" } };
      }
      if (call === READS + 2) {
        searched = lastToolResult(messages);
        return { tool: "history_read", args: { id: /id=(\S+)/.exec(searched)?.[1] ?? "none" } };
      }
      restored = lastToolResult(messages);
      return { text: "The build id was HX-5521." };
    });
    const middleware = createContextMiddleware({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
      summarizer: createExtractiveSummarizer(),
      sessionDir: await mkdtemp(join(tmpdir(), "unforget-langchain-history-")),
      history: true,
      mode,
    });
    const agent = createAgent({
      model,
      tools: [read],
      middleware: [middleware],
      systemPrompt: "You read code.",
    });
    await agent.invoke(
      { messages: [{ role: "user", content: "Read every file, then tell me the build id." }] },
      { recursionLimit: 200 },
    );
    expect(calls).toHaveLength(READS + 3);
    // The second read's output had been cleared from what the model saw before it searched.
    expect(beforeSearch).not.toContain(MARKER);
    expect(searched).toContain("id=call_2");
    const [header, ...body] = restored.split("\n");
    expect(header).toContain("id=call_2");
    expect(body.join("\n")).toBe(outputs[1]);
  });
});

describe("history option", () => {
  it("puts the tools' paragraph after the system prompt", async () => {
    const { model, calls } = createScriptedChatModel(() => ({ text: "ok" }));
    const middleware = createContextMiddleware({
      model: "claude-sonnet-4-5",
      sessionDir: await mkdtemp(join(tmpdir(), "unforget-langchain-history-")),
      history: true,
    });
    const agent = createAgent({ model, tools: [], middleware: [middleware], systemPrompt: "You read code." });
    await agent.invoke({ messages: [{ role: "user", content: "hi" }] });
    const system = calls[0]?.messages[0];
    expect(system?.getType()).toBe("system");
    expect(system?.text).toContain("You read code.");
    expect(system?.text).toContain(HISTORY_TOOLS_NOTE);
  });

  it("needs a transcript or a sessionDir, and says which to pass", () => {
    expect(() => createContextMiddleware({ model: "claude-sonnet-4-5", history: true })).toThrow(
      ConfigurationError,
    );
  });
});
