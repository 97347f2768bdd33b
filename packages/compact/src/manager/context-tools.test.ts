import type { ToolContext } from "@unforget/core";
import { createTranscriptEntry } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { createContextManager } from "./context-manager.ts";
import { createContextStatusTool } from "./context-tools.ts";

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };
const toolContext: ToolContext = {
  signal: new AbortController().signal,
  sessionId: "session",
  toolUseId: "toolu_status",
  cwd: process.cwd(),
  sessionState: new Map(),
};

describe("context_status", () => {
  it("reports the budget, the compactions and the summaries' ids", async () => {
    const c = conversationBuilder().user("Go.");
    for (let index = 0; index < 6; index++) c.tool("Read", { file_path: `f${index}.ts` }, filler(800));
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    const tool = createContextStatusTool(manager);
    await manager.prepare(c.messages);
    const before = String((await tool.execute({}, toolContext)).content);
    expect(before).toMatch(/of a 60,000-token window/);
    expect(before).toMatch(/Compactions so far: 0\./);
    await manager.compact(c.messages);
    const after = String((await tool.execute({}, toolContext)).content);
    const summaryId = manager.entries.find((entry) => entry.type === "summary")?.id;
    expect(summaryId).toBeDefined();
    expect(after).toMatch(/Compactions so far: 1\./);
    expect(after).toContain(summaryId!);
  });

  it("lists the pinned messages with their size against the cap", async () => {
    const c = conversationBuilder().user("Go.");
    for (let index = 0; index < 4; index++) c.tool("Read", { file_path: `f${index}.ts` }, filler(800));
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    const tool = createContextStatusTool(manager);
    await manager.prepare(c.messages);
    expect(String((await tool.execute({}, toolContext)).content)).toMatch(
      /Pinned messages: 0 .*15,000 tokens/,
    );
    const item = await manager.pin(c.messages, c.messages[1]!.id);
    const text = String((await tool.execute({}, toolContext)).content);
    expect(text).toMatch(/Pinned messages: 1, [\d,]+ of 15,000 tokens/);
    expect(text).toContain(item.messageId);
  });

  it("names the cleared results' tool_use ids, the newest twenty of them", async () => {
    const manager = createContextManager({ model: "m", limits: LIMITS });
    const entries = Array.from({ length: 25 }, (_, index) =>
      createTranscriptEntry({
        type: "layer_decision",
        layer: "microcompact",
        edits: [
          {
            kind: "replace_tool_result",
            toolUseIds: [`toolu_${index}`],
            details: { content: "[cleared]", reason: "cleared" },
          },
        ],
      }),
    );
    const tool = createContextStatusTool({ status: () => manager.status(), entries });
    const text = String((await tool.execute({}, toolContext)).content);
    expect(text).toMatch(/cleared, saved or cut: 25; newest ids: toolu_5, .*toolu_24\./);
    expect(text).not.toContain("toolu_4,");
  });
});
