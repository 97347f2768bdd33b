import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TranscriptEntry, TranscriptEntryInput } from "./transcript-entry.ts";
import { TranscriptCorruptError, TranscriptNotFoundError, TranscriptReadError } from "./transcript-errors.ts";
import { readTranscript, transcriptQuarantinePath } from "./transcript-reader.ts";
import { TranscriptWriter } from "./transcript-writer.ts";

let dir: string;
let counter = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-reader-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const freshPath = () => join(dir, `t${++counter}.jsonl`);
const roundTrip = (entries: TranscriptEntry[]) => JSON.parse(JSON.stringify(entries)) as TranscriptEntry[];

const textArbitrary = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("上下文压缩", "コンテキスト", "line\nbreak", 'quote " and \\ backslash', "emoji 🧠🔧"),
);
const entryArbitrary: fc.Arbitrary<TranscriptEntryInput> = fc.oneof(
  fc
    .record({ role: fc.constantFrom("user" as const, "assistant" as const), text: textArbitrary })
    .map(({ role, text }) => ({ type: "message" as const, message: createMessage(role, `m:${text}`) })),
  fc.record({ title: textArbitrary }).map(({ title }) => ({ type: "metadata" as const, title })),
  fc.record({ tokens: fc.nat(), summarized: fc.nat() }).map(({ tokens, summarized }) => ({
    type: "compact_boundary" as const,
    trigger: "auto" as const,
    tokensBefore: tokens,
    messagesSummarized: summarized,
    logicalParentId: null,
  })),
  textArbitrary.map((text) => ({ type: "summary" as const, kind: "compact" as const, text })),
);

describe("readTranscript", () => {
  it("throws TranscriptNotFoundError for a missing file, naming the path", async () => {
    const path = join(dir, "missing.jsonl");
    await expect(readTranscript(path)).rejects.toBeInstanceOf(TranscriptNotFoundError);
    await expect(readTranscript(path)).rejects.toThrow(path);
  });

  it("throws TranscriptCorruptError for a file that is not JSONL", async () => {
    const path = freshPath();
    await writeFile(path, "<html>\n<body>not a transcript</body>\n</html>\n");
    await expect(readTranscript(path)).rejects.toBeInstanceOf(TranscriptCorruptError);
  });

  it("quarantines invalid and torn lines to <path>.bad once, however often it is read", async () => {
    const path = freshPath();
    const good = '{"v":1,"type":"metadata","id":"a","timestamp":"t"}';
    await writeFile(
      path,
      `${good}\nnot json\n{"v":1,"type":"summary","id":"s","timestamp":"t","kind":"x","text":""}\n${good.slice(0, 9)}`,
    );
    const first = await readTranscript(path);
    expect(first.entries.map((entry) => entry.id)).toEqual(["a"]);
    expect(first.problems.map((problem) => [problem.kind, problem.line])).toEqual([
      ["invalid_json", 2],
      ["invalid_entry", 3],
      ["torn_line", 4],
    ]);
    expect(first.quarantinePath).toBe(transcriptQuarantinePath(path));
    expect(first.quarantinedNow).toBe(3);
    const second = await readTranscript(path);
    expect(second.quarantinedNow).toBe(0);
    const quarantined = (await readFile(`${path}.bad`, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(quarantined).toEqual([
      { line: 2, reason: expect.stringContaining("not valid JSON"), raw: "not json" },
      { line: 3, reason: expect.stringContaining("kind"), raw: expect.stringContaining('"kind":"x"') },
      { line: 4, reason: expect.stringContaining("interrupted"), raw: good.slice(0, 9) },
    ]);
  });

  it("does not write a quarantine file when asked not to, or when every line is valid or merely unknown", async () => {
    const path = freshPath();
    await writeFile(path, 'oops\n{"v":7,"type":"future","id":"f","timestamp":"t"}\n');
    const read = await readTranscript(path, { quarantine: false });
    expect(read.quarantinePath).toBeUndefined();
    await expect(readFile(`${path}.bad`)).rejects.toThrow();
    const unknownOnly = freshPath();
    await writeFile(unknownOnly, '{"v":7,"type":"future","id":"f","timestamp":"t"}\n');
    const result = await readTranscript(unknownOnly);
    expect(result.unknownEntries).toHaveLength(1);
    expect(result.quarantinePath).toBeUndefined();
  });

  it("property: a crash mid-write of the last line loses only that line, and appending afterwards works", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArbitrary, { minLength: 1, maxLength: 8 }),
        fc.array(entryArbitrary, { minLength: 0, maxLength: 3 }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        async (before, after, cutFraction) => {
          const path = freshPath();
          const writer = await TranscriptWriter.open(path, { fsync: "never" });
          const written = roundTrip(await writer.append(before));
          await writer.close();

          const bytes = await readFile(path);
          const lastLineStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
          const lastLineLength = bytes.length - lastLineStart; // includes its newline
          // Keep at least one byte of the last line and drop at least its newline.
          const kept = 1 + Math.floor(cutFraction * (lastLineLength - 1));
          await truncate(path, lastLineStart + kept);
          const onlyNewlineLost = kept === lastLineLength - 1;

          const expected = onlyNewlineLost ? written : written.slice(0, -1);
          const read = await readTranscript(path);
          expect(read.entries).toEqual(expected);
          const tornProblems = read.problems.filter((problem) => problem.kind === "torn_line");
          expect(tornProblems.map((problem) => problem.line)).toEqual(
            onlyNewlineLost ? [] : [written.length],
          );
          if (!onlyNewlineLost) {
            const quarantine = await readFile(`${path}.bad`, "utf8");
            expect(quarantine.trim().split("\n")).toHaveLength(1);
          }

          const reopened = await TranscriptWriter.open(path, { fsync: "never" });
          const appended = roundTrip(await reopened.append(after));
          await reopened.close();
          const reread = await readTranscript(path);
          expect(reread.entries).toEqual([...expected, ...appended]);
          // The torn fragment stays one isolated bad line at the same place, and is not quarantined twice.
          expect(reread.problems.map((problem) => problem.line)).toEqual(
            onlyNewlineLost ? [] : [written.length],
          );
          expect(reread.quarantinedNow).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("readTranscript on a path it cannot read", () => {
  it("throws a TranscriptReadError that names the path and says what to do, not a bare Node error", async () => {
    const path = freshPath();
    await mkdir(path);
    const error = await readTranscript(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TranscriptReadError);
    expect(error).toMatchObject({ code: "transcript_read", path });
    expect((error as Error).message).toContain(path);
    expect((error as Error).cause).toMatchObject({ code: "EISDIR" });
  });
});
