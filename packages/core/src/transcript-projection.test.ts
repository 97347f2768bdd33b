import { describe, expect, it } from "vitest";
import { createMessage } from "./message.ts";
import type { TranscriptEntry } from "./transcript-entry.ts";
import { createTranscriptEntry } from "./transcript-entry.ts";
import { projectMessages } from "./transcript-projection.ts";

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
