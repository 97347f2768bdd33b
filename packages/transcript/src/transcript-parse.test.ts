import { createMessage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createTranscriptEntry } from "./transcript-entry.ts";
import { TranscriptCorruptError } from "./transcript-errors.ts";
import { parseTranscript } from "./transcript-parse.ts";

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const message = createMessage("user", "hello", { id: "m1", timestamp: "2025-01-01T00:00:00.000Z" });
const messageEntry = createTranscriptEntry({ type: "message", message }, { now: new Date(0) });

describe("parseTranscript", () => {
  it("returns valid entries in order and ignores blank lines", () => {
    const second = createTranscriptEntry({ type: "metadata", title: "t" }, { now: new Date(0) });
    const parsed = parseTranscript(`${line(messageEntry)}\n${line(second)}`);
    expect(parsed.entries).toEqual([messageEntry, second]);
    expect(parsed.problems).toEqual([]);
  });

  it("reports invalid JSON, non-objects and invalid entries with line numbers, keeping the rest", () => {
    const text = [
      line(messageEntry),
      "{not json\n",
      "42\n",
      line({
        v: 1,
        type: "message",
        id: "x",
        timestamp: "t",
        message: { id: "x", role: "robot", content: [] },
      }),
      line({ ...messageEntry, id: "m2", message: { ...message, id: "m2" } }),
    ].join("");
    const parsed = parseTranscript(text);
    expect(parsed.entries.map((entry) => entry.id)).toEqual(["m1", "m2"]);
    expect(parsed.problems.map((problem) => [problem.kind, problem.line])).toEqual([
      ["invalid_json", 2],
      ["invalid_json", 3],
      ["invalid_entry", 4],
    ]);
    expect(parsed.problems[2]?.reason).toContain("role");
    expect(parsed.problems[0]?.raw).toBe("{not json");
  });

  it("reads pin entries and refuses one without its ids or its flag", () => {
    const pin = createTranscriptEntry(
      { type: "pin", messageIds: ["m1"], pinned: true },
      { now: new Date(0) },
    );
    const parsed = parseTranscript(
      `${line(pin)}${line({ ...pin, id: "p2", messageIds: "m1" })}${line({ ...pin, id: "p3", pinned: "yes" })}`,
    );
    expect(parsed.entries).toEqual([pin]);
    expect(parsed.problems.map((problem) => [problem.kind, problem.line])).toEqual([
      ["invalid_entry", 2],
      ["invalid_entry", 3],
    ]);
  });

  it("reports a torn last line (no newline, not JSON) as torn_line", () => {
    const full = line(messageEntry);
    const parsed = parseTranscript(`${full}${full.slice(0, 20)}`);
    expect(parsed.entries).toHaveLength(1);
    expect(parsed.problems).toEqual([
      expect.objectContaining({ kind: "torn_line", line: 2, raw: full.slice(0, 20) }),
    ]);
  });

  it("accepts a complete last entry that only lacks its newline", () => {
    const parsed = parseTranscript(line(messageEntry).trimEnd());
    expect(parsed.entries).toEqual([messageEntry]);
    expect(parsed.problems).toEqual([]);
  });

  it("keeps entries of unknown type or newer version in unknownEntries and reports them", () => {
    const future = { v: 1, type: "hologram", id: "h1", timestamp: "t", payload: { x: 1 } };
    const newer = { ...messageEntry, v: 99 };
    const parsed = parseTranscript(line(future) + line(newer) + line(messageEntry));
    expect(parsed.entries).toEqual([messageEntry]);
    expect(parsed.unknownEntries).toEqual([
      { line: 1, type: "hologram", v: 1, value: future },
      { line: 2, type: "message", v: 99, value: newer },
    ]);
    expect(parsed.problems.map((problem) => problem.kind)).toEqual(["unknown_entry", "unknown_entry"]);
  });

  it("normalises message content: a string becomes a text block, unknown blocks are preserved", () => {
    const raw = {
      ...messageEntry,
      message: { ...message, content: [{ type: "server_tool_use", id: "s1" }, "plain"] },
    };
    const stringContent = { ...messageEntry, id: "m3", message: { ...message, id: "m3", content: "hi" } };
    const parsed = parseTranscript(line(raw) + line(stringContent));
    expect(parsed.entries[0]).toMatchObject({
      message: {
        content: [
          { type: "unknown", original: { type: "server_tool_use", id: "s1" } },
          { type: "text", text: "plain" },
        ],
      },
    });
    expect(parsed.entries[1]).toMatchObject({ message: { content: [{ type: "text", text: "hi" }] } });
  });

  it("throws TranscriptCorruptError when no line is a JSON object", () => {
    expect(() => parseTranscript("# Notes\nnot a transcript\n", { path: "notes.md" })).toThrow(
      TranscriptCorruptError,
    );
    expect(() => parseTranscript('{"a":\n  1}\n')).toThrow(/not a JSONL transcript/);
  });

  it("treats an empty text and a single torn first line as an empty transcript, not corruption", () => {
    expect(parseTranscript("")).toEqual({ entries: [], unknownEntries: [], problems: [] });
    const torn = parseTranscript('{"v":1,"ty');
    expect(torn.entries).toEqual([]);
    expect(torn.problems[0]?.kind).toBe("torn_line");
  });

  it("reports a line nested absurdly deep as an invalid entry: it could never be written back", () => {
    const deep = `${"[".repeat(20_000)}1${"]".repeat(20_000)}`;
    const nested = { ...messageEntry, id: "m2", message: { ...message, id: "m2", isMeta: "DEEP" } };
    const text = `${line(messageEntry)}${JSON.stringify(nested).replace('"DEEP"', deep)}\n`;
    const parsed = parseTranscript(text);
    expect(parsed.entries).toEqual([messageEntry]);
    expect(parsed.problems).toEqual([
      expect.objectContaining({
        kind: "invalid_entry",
        line: 2,
        reason: expect.stringMatching(/levels deep/),
      }),
    ]);
    expect(() => JSON.stringify(parsed.entries)).not.toThrow();
  });
});
