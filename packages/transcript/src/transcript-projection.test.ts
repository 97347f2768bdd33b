import { contentBlocks, createMessage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import type { LayerEdit, TranscriptEntry } from "./transcript-entry.ts";
import { createTranscriptEntry } from "./transcript-entry.ts";
import { projectContext, projectMessages, toRequestMessages } from "./transcript-projection.ts";

const user = (id: string, text: string, init = {}) => createMessage("user", text, { id, ...init });
const assistant = (id: string, text: string) => createMessage("assistant", text, { id });
const entry = (message: ReturnType<typeof createMessage>) =>
  createTranscriptEntry({ type: "message", message });
const boundary = (id: string) =>
  createTranscriptEntry({
    type: "compact_boundary",
    id,
    trigger: "auto",
    tokensBefore: 1000,
    messagesSummarized: 2,
    logicalParentId: "a1",
  });

describe("projectMessages", () => {
  it("returns every message when there is no boundary", () => {
    const entries: TranscriptEntry[] = [
      entry(user("u1", "hi")),
      createTranscriptEntry({ type: "metadata", title: "x" }),
      entry(assistant("a1", "yo")),
    ];
    expect(projectMessages(entries).map((m) => m.id)).toEqual(["u1", "a1"]);
  });

  it("starts after the last boundary, including the summary's user message", () => {
    const entries = [
      entry(user("u1", "hi")),
      entry(assistant("a1", "yo")),
      boundary("b1"),
      entry(user("s1", "summary one", { isCompactSummary: true, isMeta: true })),
      entry(assistant("a2", "ok")),
      boundary("b2"),
      entry(user("s2", "summary two", { isCompactSummary: true, isMeta: true })),
      entry(assistant("a3", "continuing")),
    ];
    expect(projectMessages(entries).map((m) => m.id)).toEqual(["s2", "a3"]);
  });

  it("turns a compact summary entry into the opening user message when no summary message exists", () => {
    const entries = [
      entry(user("u1", "hi")),
      boundary("b1"),
      createTranscriptEntry({
        type: "summary",
        kind: "compact",
        id: "sum1",
        text: "The story so far",
        boundaryId: "b1",
      }),
      entry(assistant("a2", "ok")),
    ];
    const projected = projectMessages(entries);
    expect(projected.map((m) => [m.role, m.isCompactSummary ?? false])).toEqual([
      ["user", true],
      ["assistant", false],
    ]);
    expect(projected[0]?.content).toEqual([{ type: "text", text: "The story so far" }]);
  });
});

describe("projectContext", () => {
  const toolUse = (id: string, useId: string) =>
    createMessage(
      "assistant",
      [{ type: "tool_use", id: useId, name: "Read", input: { file_path: "a.ts" } }],
      {
        id,
      },
    );
  const toolResult = (id: string, useId: string, content: string) =>
    createMessage("user", [{ type: "tool_result", tool_use_id: useId, content }], { id });
  const decision = (edits: LayerEdit[]) =>
    createTranscriptEntry({
      type: "layer_decision",
      layer: "test",
      edits,
      timestamp: "2026-01-01T00:00:00.000Z",
    });

  it("applies replaced tool results and leaves the original on disk", () => {
    const entries: TranscriptEntry[] = [
      entry(user("u1", "read it")),
      entry(toolUse("a1", "t1")),
      entry(toolResult("r1", "t1", "x".repeat(1000))),
      decision([
        {
          kind: "replace_tool_result",
          toolUseIds: ["t1"],
          details: { content: "[cleared]", reason: "cleared" },
        },
      ]),
    ];
    const { messages } = projectContext(entries);
    expect(messages[2]?.content).toEqual([{ type: "tool_result", tool_use_id: "t1", content: "[cleared]" }]);
    const original = entries[2];
    expect(original?.type === "message" && original.message.content[0]).toMatchObject({
      content: "x".repeat(1000),
    });
  });

  it("removes a run and puts its replacement where the run started; a later edit can remove the replacement", () => {
    const entries: TranscriptEntry[] = [
      entry(user("u1", "one")),
      entry(assistant("a1", "two")),
      entry(user("u2", "three")),
      entry(assistant("a2", "four")),
      entry(user("u3", "five")),
      decision([
        {
          kind: "replace_messages",
          messageIds: ["a1", "u2"],
          details: { replacement: { id: "p1", role: "user", text: "[2 snipped]" }, reason: "snip" },
        },
      ]),
    ];
    expect(projectMessages(entries).map((m) => m.id)).toEqual(["u1", "p1", "a2", "u3"]);
    entries.push(
      decision([
        {
          kind: "replace_messages",
          messageIds: ["p1", "a2"],
          details: { replacement: { id: "p2", role: "user", text: "[collapsed]" }, reason: "collapse" },
        },
      ]),
    );
    const projected = projectMessages(entries);
    expect(projected.map((m) => m.id)).toEqual(["u1", "p2", "u3"]);
    expect(projected[1]?.timestamp).toBe("2026-01-01T00:00:00.000Z");
  });

  it("puts the summary, then the preserved messages, then what followed the boundary, then attachments", () => {
    const entries: TranscriptEntry[] = [
      entry(user("u1", "old")),
      entry(assistant("a1", "old reply")),
      entry(user("u2", "kept")),
      entry(assistant("a2", "kept reply")),
      createTranscriptEntry({
        type: "compact_boundary",
        id: "b1",
        trigger: "auto",
        tokensBefore: 100,
        messagesSummarized: 2,
        logicalParentId: "a2",
        preservedSegment: { anchorId: "u2", messageIds: ["u2", "a2"] },
      }),
      createTranscriptEntry({
        type: "summary",
        kind: "compact",
        id: "s1",
        text: "Summary",
        boundaryId: "b1",
      }),
      createTranscriptEntry({
        type: "attachment",
        id: "att1",
        attachment: { kind: "file", content: "a.ts body" },
      }),
      entry(user("u3", "new")),
    ];
    const projected = projectContext(entries);
    expect(projected.boundary?.id).toBe("b1");
    expect(projected.messages.map((m) => m.id)).toEqual(["s1_message", "u2", "a2", "att1", "u3"]);
    expect(projected.messages[3]).toMatchObject({ isMeta: true, metadata: { attachment: "file" } });
  });

  it("projects byte-identically after a JSON round trip", () => {
    const entries: TranscriptEntry[] = [
      entry(user("u1", "one")),
      entry(toolUse("a1", "t1")),
      entry(toolResult("r1", "t1", "body")),
      decision([
        {
          kind: "replace_tool_result",
          toolUseIds: ["t1"],
          details: { content: "[cleared]", reason: "cleared" },
        },
      ]),
    ];
    const reread = JSON.parse(JSON.stringify(entries)) as TranscriptEntry[];
    expect(JSON.stringify(toRequestMessages(projectMessages(reread)))).toBe(
      JSON.stringify(toRequestMessages(projectMessages(entries))),
    );
  });
});

describe("toRequestMessages", () => {
  it("merges same-role neighbours with tool results first and opens with a user message", () => {
    const request = toRequestMessages([
      assistant("a0", "hello"),
      user("u1", "context"),
      createMessage("user", [{ type: "tool_result", tool_use_id: "t1", content: "ok" }], { id: "r1" }),
    ]);
    expect(request.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(contentBlocks(request[2]?.content ?? []).map((b) => b.type)).toEqual(["tool_result", "text"]);
  });
});
