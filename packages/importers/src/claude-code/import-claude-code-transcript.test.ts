import { findToolPairViolations } from "@unforget/core";
import { projectMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { ImportError } from "../shared/session-errors.ts";
import { importClaudeCodeTranscript } from "./import-claude-code-transcript.ts";

const jsonl = (lines: unknown[]) =>
  `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`;
let minute = 0;
const at = () => `2025-08-01T10:${String(minute++).padStart(2, "0")}:00.000Z`;
const user = (
  uuid: string,
  parentUuid: string | null,
  content: unknown,
  extra: Record<string, unknown> = {},
) => ({
  type: "user",
  uuid,
  parentUuid,
  sessionId: "sess-1",
  timestamp: at(),
  isSidechain: false,
  message: { role: "user", content },
  ...extra,
});
const assistant = (
  uuid: string,
  parentUuid: string | null,
  id: string,
  content: unknown[],
  extra: Record<string, unknown> = {},
) => ({
  type: "assistant",
  uuid,
  parentUuid,
  sessionId: "sess-1",
  timestamp: at(),
  isSidechain: false,
  message: {
    id,
    role: "assistant",
    model: "claude-sonnet-4-5",
    content,
    stop_reason: "tool_use",
    usage: {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 7,
    },
  },
  ...extra,
});
const toolUse = (id: string) => ({ type: "tool_use", id, name: "Read", input: { file_path: `/${id}` } });
const toolResult = (id: string) => ({ type: "tool_result", tool_use_id: id, content: `contents of ${id}` });

describe("importClaudeCodeTranscript", () => {
  it("merges split responses and parallel results, skips sidechains, and splits at compact boundaries", () => {
    const text = jsonl([
      { type: "summary", summary: "Fixing the bug", leafUuid: "a6" },
      user("u1", null, "Fix the bug"),
      assistant("a1", "u1", "resp1", [{ type: "thinking", thinking: "look first", signature: "sig" }]),
      assistant("a2", "a1", "resp1", [toolUse("t1")]),
      assistant("a3", "a2", "resp1", [toolUse("t2")]),
      user("r1", "a3", [toolResult("t1")], { toolUseResult: { stdout: "x" } }),
      user("r2", "r1", [toolResult("t2")]),
      assistant("s1", "r2", "side", [{ type: "text", text: "subagent work" }], { isSidechain: true }),
      assistant("a4", "r2", "resp2", [{ type: "text", text: "Done" }]),
      { type: "file-history-snapshot", messageId: "a4", snapshot: {} },
      {
        type: "system",
        subtype: "compact_boundary",
        uuid: "b1",
        parentUuid: null,
        logicalParentUuid: "a4",
        timestamp: at(),
        content: "Conversation compacted",
        compactMetadata: { trigger: "auto", preTokens: 160309, preCompactDiscoveredTools: ["WebSearch"] },
      },
      user("c1", "b1", "This session is being continued from a previous conversation.", {
        isCompactSummary: true,
        isVisibleInTranscriptOnly: true,
      }),
      assistant("a5", "c1", "resp3", [{ type: "text", text: "Continuing" }]),
      user("u3", "a5", "<local-command-caveat>Caveat</local-command-caveat>", { isMeta: true }),
      assistant("a6", "u3", "resp4", [{ type: "text", text: "ok" }]),
    ]);
    const result = importClaudeCodeTranscript(text);

    expect(result.report.violations).toEqual([]);
    expect(result.report.repairs).toEqual([]);
    expect(result.report.problems).toEqual([]);
    expect(result.messages.map((message) => message.id)).toEqual(["c1", "a5", "u3", "a6"]);
    expect(result.messages[0]).toMatchObject({ isCompactSummary: true, isMeta: true, role: "user" });
    expect(result.messages[2]).toMatchObject({ isMeta: true });
    expect(projectMessages(result.entries)).toEqual(result.messages);

    expect(result.entries.map((entry) => (entry.type === "message" ? entry.message.id : entry.type))).toEqual(
      ["summary", "u1", "a1", "r1", "a4", "compact_boundary", "c1", "a5", "u3", "a6"],
    );
    const merged = result.entries[2];
    expect(merged?.type === "message" && merged.message.content.map((block) => block.type)).toEqual([
      "thinking",
      "tool_use",
      "tool_use",
    ]);
    expect(merged).toMatchObject({
      sessionId: "sess-1",
      message: {
        responseId: "resp1",
        model: "claude-sonnet-4-5",
        stopReason: "tool_use",
        usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 100, cacheCreationInputTokens: 7 },
      },
    });
    const results = result.entries[3];
    expect(results?.type === "message" && results.message.content).toEqual([
      { type: "tool_result", tool_use_id: "t1", content: "contents of t1" },
      { type: "tool_result", tool_use_id: "t2", content: "contents of t2" },
    ]);
    const boundary = result.entries[5];
    expect(boundary).toMatchObject({
      type: "compact_boundary",
      trigger: "auto",
      tokensBefore: 160309,
      logicalParentId: "a4",
      discoveredTools: ["WebSearch"],
    });
    expect(result.report.counts).toMatchObject({
      sourceItems: 15,
      messages: 8,
      liveMessages: 4,
      toolPairs: 2,
      boundaries: 1,
      summaries: 1,
      sidechainSkipped: 1,
      mergedSourceItems: 3,
      skippedByType: { "file-history-snapshot": 1 },
      invalid: 0,
      repairs: 0,
    });
  });

  it("imports the newest branch after a rewind and counts the abandoned lines", () => {
    const text = jsonl([
      user("u1", null, "start"),
      assistant("a1", "u1", "r-a", [{ type: "text", text: "first answer" }]),
      user("u2", "a1", "old question"),
      assistant("a2", "u2", "r-b", [{ type: "text", text: "old answer" }]),
      user("u3", "a1", "new question"),
      assistant("a3", "u3", "r-c", [{ type: "text", text: "new answer" }]),
    ]);
    const result = importClaudeCodeTranscript(text);
    expect(result.messages.map((message) => message.id)).toEqual(["u1", "a1", "u3", "a3"]);
    expect(result.report.counts.offBranchSkipped).toBe(2);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "rewind_branch", location: { line: 3 } }),
    ]);
  });

  it("follows parent links through bookkeeping lines and keeps parallel results that hang off the branch", () => {
    const text = jsonl([
      user("u1", null, "start"),
      assistant("a1", "u1", "r1", [toolUse("t1")]),
      assistant("a2", "a1", "r1", [toolUse("t2")]),
      // Each result points at the line of its own tool_use, so the first one is a side leaf.
      user("x1", "a1", [toolResult("t1")]),
      user("x2", "a2", [toolResult("t2")]),
      assistant("a5", "x2", "r4", [{ type: "text", text: "read both" }]),
      { type: "system", subtype: "turn_duration", uuid: "d1", parentUuid: "a5", timestamp: at() },
      user("u2", "d1", "abandoned question"),
      assistant("a3", "u2", "r2", [{ type: "text", text: "abandoned answer" }]),
      user("u3", "d1", "question after rewind"),
      assistant("a4", "u3", "r3", [{ type: "text", text: "answer" }]),
    ]);
    const result = importClaudeCodeTranscript(text);
    expect(result.messages.map((message) => message.id)).toEqual(["u1", "a1", "x1", "a5", "u3", "a4"]);
    expect(
      result.messages[2]?.content.map((block) => block.type === "tool_result" && block.tool_use_id),
    ).toEqual(["t1", "t2"]);
    expect(result.report.counts).toMatchObject({
      offBranchSkipped: 2,
      skippedByType: { "system/turn_duration": 1 },
    });
    expect(result.report.repairs).toEqual([]);
  });

  it("reports unreadable lines and tool-pair defects with their lines and repairs them", () => {
    const text = `${jsonl([
      { type: "user", message: { role: "user", content: "hi" } },
      { type: "assistant", message: { id: "r1", role: "assistant", content: [toolUse("t1")] } },
      "not json",
      { type: "user", message: { role: "user", content: "next" } },
      {
        type: "assistant",
        message: { id: "r2", role: "assistant", content: [{ type: "text", text: "fine" }] },
      },
      { type: "user", message: { role: "user", content: [toolResult("t9")] } },
    ])}{"type":"assistant","mess`;
    const result = importClaudeCodeTranscript(text);
    expect(findToolPairViolations(result.messages)).toEqual([]);
    expect(result.report.remainingViolations).toEqual([]);
    expect(result.report.problems.map((problem) => [problem.kind, problem.location.line])).toEqual([
      ["invalid_json", 3],
      ["torn_line", 7],
    ]);
    expect(result.report.violations.map((violation) => [violation.kind, violation.location.line])).toEqual(
      expect.arrayContaining([
        ["dangling_tool_use", 2],
        ["orphan_tool_result", 6],
      ]),
    );
    expect(result.report.repairs.map((repair) => [repair.kind, repair.location.line])).toEqual(
      expect.arrayContaining([
        ["added_missing_tool_result", 4],
        ["dropped_orphan_tool_result", 6],
      ]),
    );
    expect(result.report.counts.repairs).toBe(result.report.repairs.length);
    expect(result.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("turns attachment lines into attachment entries in place, without breaking a split response", () => {
    const text = jsonl([
      { type: "attachment", attachment: { type: "deferred_tools_delta", addedNames: ["WebFetch"] } },
      user("u1", null, "Read both files"),
      assistant("a1", "u1", "resp1", [toolUse("t1")]),
      {
        type: "attachment",
        uuid: "att1",
        parentUuid: "a1",
        timestamp: at(),
        attachment: {
          type: "hook_additional_context",
          hookName: "PostToolUse:Read",
          content: ["first note", "second note"],
        },
      },
      assistant("a2", "att1", "resp1", [toolUse("t2")]),
      user("r1", "a2", [toolResult("t1"), toolResult("t2")]),
      {
        type: "attachment",
        uuid: "att2",
        parentUuid: "r1",
        timestamp: at(),
        attachment: { type: "todo", content: [{ type: "text", text: "1. fix" }] },
      },
      assistant("a3", "att2", "resp2", [{ type: "text", text: "Done" }]),
      '{"type":"attachment"}',
    ]);
    const result = importClaudeCodeTranscript(text);
    expect(result.entries.map((entry) => (entry.type === "message" ? entry.message.id : entry.id))).toEqual([
      "attachment-line1",
      "u1",
      "a1",
      "att1",
      "r1",
      "att2",
      "a3",
    ]);
    const attachments = result.entries.flatMap((entry) => (entry.type === "attachment" ? [entry] : []));
    expect(attachments.map((entry) => entry.attachment)).toEqual([
      {
        kind: "deferred_tools_delta",
        content: JSON.stringify({ addedNames: ["WebFetch"] }),
        metadata: { source: { line: 1 }, fields: { addedNames: ["WebFetch"] } },
      },
      {
        kind: "hook_additional_context",
        content: "first note\nsecond note",
        source: "PostToolUse:Read",
        metadata: { source: { line: 4 }, parentUuid: "a1", fields: { hookName: "PostToolUse:Read" } },
      },
      {
        kind: "todo",
        content: [{ type: "text", text: "1. fix" }],
        metadata: { source: { line: 7 }, parentUuid: "r1", fields: {} },
      },
    ]);
    // The split response is still one message although an attachment line sits between its parts.
    expect(result.messages[1]?.content.map((block) => block.type === "tool_use" && block.id)).toEqual([
      "t1",
      "t2",
    ]);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "invalid_line", location: { line: 9 } }),
    ]);
    expect(result.report.repairs).toEqual([]);
  });

  it("keeps the structured toolUseResult of every result line on the message metadata", () => {
    const text = jsonl([
      user("u1", null, "Run it"),
      assistant("a1", "u1", "resp1", [toolUse("t1"), toolUse("t2")]),
      user("r1", "a1", [toolResult("t1")], {
        toolUseResult: { stdout: "ok", stderr: "", interrupted: false },
      }),
      user("r2", "r1", [toolResult("t2")], { toolUseResult: { filePath: "/t2", numLines: 3 } }),
    ]);
    const result = importClaudeCodeTranscript(text);
    expect(result.messages[2]?.metadata?.toolUseResults).toEqual({
      t1: { stdout: "ok", stderr: "", interrupted: false },
      t2: { filePath: "/t2", numLines: 3 },
    });
  });

  it("accepts a JSON document with a loglines array (index locations)", () => {
    const result = importClaudeCodeTranscript(
      JSON.stringify({
        loglines: [user("x1", null, "hello"), assistant("x2", "x1", "r", [{ type: "text", text: "hi" }]), 7],
      }),
    );
    expect(result.messages.map((message) => message.id)).toEqual(["x1", "x2"]);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "invalid_line", location: { index: 2 } }),
    ]);
  });

  it("throws ImportError naming the expected format when no line is a Claude Code object", () => {
    expect(() => importClaudeCodeTranscript("hello\nworld\n")).toThrow(ImportError);
    expect(() => importClaudeCodeTranscript("")).toThrow(/Claude Code session JSONL/);
  });
});
