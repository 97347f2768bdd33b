import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { ImportError } from "../shared/session-errors.ts";
import { importUnforgetTranscript } from "./import-unforget-transcript.ts";

describe("importUnforgetTranscript", () => {
  it("returns the written entries unchanged and the projection after the last boundary as messages", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-import-"));
    try {
      const path = join(dir, "s.jsonl");
      const writer = await TranscriptWriter.open(path, { sessionId: "s" });
      const written = await writer.append([
        { type: "message", message: createMessage("user", "old", { id: "u1" }) },
        {
          type: "message",
          message: createMessage("assistant", [{ type: "tool_use", id: "t1", name: "x", input: {} }], {
            id: "a1",
          }),
        },
        {
          type: "compact_boundary",
          trigger: "manual",
          tokensBefore: 10,
          messagesSummarized: 2,
          logicalParentId: "a1",
        },
        {
          type: "message",
          message: createMessage("user", "summary", { id: "s1", isCompactSummary: true, isMeta: true }),
        },
        {
          type: "message",
          message: createMessage("assistant", [{ type: "tool_use", id: "t2", name: "x", input: {} }], {
            id: "a2",
          }),
        },
      ]);
      await writer.close();
      const text = `${await readFile(path, "utf8")}garbage line\n`;
      const result = importUnforgetTranscript(text);
      expect(result.entries).toEqual(JSON.parse(JSON.stringify(written)));
      expect(result.messages.map((message) => message.id).slice(0, 2)).toEqual(["s1", "a2"]);
      // The live projection ends in an unanswered tool_use: the repair adds its result and says so.
      expect(result.report.repairs).toEqual([
        expect.objectContaining({ kind: "added_missing_tool_result", toolUseId: "t2" }),
      ]);
      expect(result.report.violations).toEqual([
        expect.objectContaining({ kind: "dangling_tool_use", location: { line: 5 } }),
      ]);
      expect(result.report.problems).toEqual([
        expect.objectContaining({ kind: "invalid_json", location: { line: 6 } }),
      ]);
      expect(result.report.counts).toMatchObject({
        messages: 4,
        liveMessages: 3,
        boundaries: 1,
        toolPairs: 2,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("throws ImportError for text that is not a transcript", () => {
    expect(() => importUnforgetTranscript("# heading\nprose\n")).toThrow(ImportError);
  });
});
