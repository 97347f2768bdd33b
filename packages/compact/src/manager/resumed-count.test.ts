import { createMessage, type ToolDefinition } from "@unforget/core";
import { createTranscriptEntry, type TranscriptEntry } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { createContextManager } from "./context-manager.ts";

// A manager resumed from a transcript counts its context as the closed one did: from the usage the last response
// reported, unless something edited the context after it, then from an estimate of what is left.

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };
const REPORTED = 26_000;

/** A large tool result, then an answer whose usage reported the request that held it. */
function closedSession() {
  const c = conversationBuilder().user("Read the log.");
  c.tool("Read", { file_path: "build.log" }, filler(20_000));
  c.assistant("The log says the build passed.", REPORTED);
  const entries: TranscriptEntry[] = c.messages.map((message) =>
    createTranscriptEntry({ type: "message", message }),
  );
  return { c, entries };
}

describe.each(["context", "all"] as const)("a resumed manager's count (retainEntries: %s)", (retain) => {
  it("goes on from the last usage: before the first call, and in that call's count", async () => {
    const { c, entries } = closedSession();
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: entries,
      retainEntries: retain,
    });
    const gauge = manager.status().tokens;
    // The reported size and the answer after it (a few tokens), not the result estimated again on top.
    expect(gauge).toBeGreaterThanOrEqual(REPORTED);
    expect(gauge).toBeLessThan(REPORTED + 100);
    const prepared = await manager.prepare([...c.messages, createMessage("user", "Go on.")]);
    expect(prepared.actions).toEqual([]);
    expect(prepared.tokens - gauge).toBeGreaterThan(0);
    expect(prepared.tokens - gauge).toBeLessThan(20);
  });

  it("does not go on from a usage that a layer decision after it made stale", async () => {
    const { c, entries } = closedSession();
    const useId = c.messages[1]!.content.find((block) => block.type === "tool_use")!.id;
    entries.push(
      createTranscriptEntry({
        type: "layer_decision",
        layer: "microcompact",
        edits: [
          {
            kind: "replace_tool_result",
            toolUseIds: [useId],
            details: { content: "[Old tool result content cleared]", reason: "cleared" },
          },
        ],
      }),
    );
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: entries,
      retainEntries: retain,
    });
    // What is left is a few short messages: the 26,000 tokens reported before the clearing are gone.
    expect(manager.status().tokens).toBeLessThan(1_000);
  });
  it("after a compaction that no response measured, counts the system prompt and tools as its first request will", async () => {
    const c = conversationBuilder().user("Read the logs.");
    // A subagent's reports: kept whole by the cheap layers, so the summary acts.
    for (let part = 0; part < 6; part++) c.tool("Task", { description: `log ${part}` }, filler(2_000, part));
    c.assistant("All read.");
    const request: { system: string; tools: ToolDefinition[] } = {
      system: "You are careful. ".repeat(200),
      tools: [{ name: "Read", description: "Reads a file. ".repeat(100), inputSchema: { type: "object" } }],
    };
    const written: TranscriptEntry[] = [];
    const closed = createContextManager({
      model: "m",
      limits: LIMITS,
      transcript: { append: (entries) => void written.push(...entries) },
      retainEntries: retain,
    });
    await closed.prepare(c.messages, request);
    await closed.compact(c.messages, request);
    expect(closed.status().compactions).toBe(1);
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      resume: written,
      retainEntries: retain,
      request,
    });
    const gauge = manager.status().tokens;
    const prepared = await manager.prepare([...c.messages, createMessage("user", "Go on.")], request);
    expect(prepared.actions).toEqual([]);
    // The same count but the new prompt's few tokens: the system prompt and tools were in it before the call.
    expect(prepared.tokens - gauge).toBeGreaterThan(0);
    expect(prepared.tokens - gauge).toBeLessThan(20);
  });
});
