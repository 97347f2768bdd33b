import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, createMessage } from "@unforget/core";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TranscriptEntryInput } from "./transcript-entry.ts";
import { createTranscriptEntry } from "./transcript-entry.ts";
import { TranscriptCorruptError, TranscriptNotFoundError, TranscriptReadError } from "./transcript-errors.ts";
import type { ParsedTranscript } from "./transcript-parse.ts";
import { parseTranscript } from "./transcript-parse.ts";
import type { StreamTranscriptOptions, TranscriptStreamItem } from "./transcript-stream.ts";
import { streamTranscript } from "./transcript-stream.ts";

let dir: string;
let counter = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-stream-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const freshPath = () => join(dir, `t${++counter}.jsonl`);

async function collect(path: string, options?: StreamTranscriptOptions): Promise<TranscriptStreamItem[]> {
  const items: TranscriptStreamItem[] = [];
  for await (const item of streamTranscript(path, options)) items.push(item);
  return items;
}

/** The stream's items regrouped as `parseTranscript` returns them. */
function regroup(items: TranscriptStreamItem[]): ParsedTranscript {
  const result: ParsedTranscript = { entries: [], unknownEntries: [], problems: [] };
  for (const item of items) {
    if (item.kind === "entry") result.entries.push(item.entry);
    else {
      result.problems.push(item.problem);
      if (item.unknownEntry) result.unknownEntries.push(item.unknownEntry);
    }
  }
  return result;
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("上下文压缩", "コンテキスト", "emoji 🧠🔧", "line\nbreak", "tab\there"),
);
const entryInput: fc.Arbitrary<TranscriptEntryInput> = fc.oneof(
  fc
    .record({ role: fc.constantFrom("user" as const, "assistant" as const), text, id: fc.nat() })
    .map(({ role, text, id }) => ({
      type: "message" as const,
      message: createMessage(role, text, { id: `m${id}`, timestamp: "2025-01-01T00:00:00.000Z" }),
    })),
  text.map((title) => ({ type: "metadata" as const, title })),
  text.map((summary) => ({ type: "summary" as const, kind: "compact" as const, text: summary })),
);
/** One line of a transcript file: valid entries mostly, and every kind of bad line. */
const lineArbitrary: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: entryInput.map((input) => JSON.stringify(createTranscriptEntry(input, { now: new Date(0) }))),
  },
  { weight: 1, arbitrary: fc.constantFrom("", "   ", "not json {", "[1,2]", '"a string"', "42") },
  { weight: 1, arbitrary: fc.constant('{"v":1,"type":"message","id":"x","timestamp":"t"}') },
  { weight: 1, arbitrary: fc.constant('{"v":9,"type":"hologram","id":"h","timestamp":"t"}') },
  {
    weight: 1,
    arbitrary: entryInput.map(
      (input) => `${JSON.stringify(createTranscriptEntry(input, { now: new Date(0) }))}\r`,
    ),
  },
);
const fileArbitrary = fc
  .record({
    lines: fc.array(lineArbitrary, { maxLength: 12 }),
    // The last line: terminated, cut off at some byte (a crash mid-write), or a valid line without its newline.
    tail: fc.oneof(
      fc.constant(""),
      fc
        .tuple(entryInput, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }))
        .map(([input, at]) => {
          const line = JSON.stringify(createTranscriptEntry(input, { now: new Date(0) }));
          return line.slice(0, Math.max(1, Math.floor(line.length * at)));
        }),
    ),
  })
  .map(({ lines, tail }) => `${lines.map((line) => `${line}\n`).join("")}${tail}`);

describe("streamTranscript", () => {
  it("yields exactly what parseTranscript gives, for any content and chunk size, and resumes from any offset", async () => {
    await fc.assert(
      fc.asyncProperty(
        fileArbitrary,
        fc.integer({ min: 1, max: 96 }),
        fc.nat(),
        async (content, chunkSize, pick) => {
          const path = freshPath();
          await writeFile(path, content);
          let expected: ParsedTranscript | undefined;
          try {
            expected = parseTranscript(content, { path });
          } catch (error) {
            expect(error).toBeInstanceOf(TranscriptCorruptError);
          }
          if (expected === undefined) {
            await expect(collect(path, { chunkSize })).rejects.toBeInstanceOf(TranscriptCorruptError);
            return;
          }
          const items = await collect(path, { chunkSize });
          expect(regroup(items)).toEqual(expected);
          // Every offset is the end of a line (or of the file), and offsets grow.
          const bytes = Buffer.from(content);
          for (const [index, item] of items.entries()) {
            expect(item.offset === bytes.length || bytes[item.offset - 1] === 0x0a).toBe(true);
            if (index > 0) expect(item.offset).toBeGreaterThan(items[index - 1]!.offset);
          }
          if (items.length === 0) return;
          const from = items[pick % items.length]!;
          const resumed = await collect(path, {
            chunkSize,
            fromOffset: from.offset,
            fromLine: from.line + 1,
          });
          expect(resumed).toEqual(items.slice(items.indexOf(from) + 1));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("reports a torn last line like readTranscript, and continues after a writer appended past it", async () => {
    const path = freshPath();
    const entry = (title: string) =>
      JSON.stringify(createTranscriptEntry({ type: "metadata", title }, { now: new Date(0) }));
    await writeFile(path, `${entry("one")}\n${entry("two").slice(0, 20)}`);
    const first = await collect(path, { chunkSize: 7 });
    expect(first.map((item) => (item.kind === "entry" ? "entry" : item.problem.kind))).toEqual([
      "entry",
      "torn_line",
    ]);
    // The writer starts with a newline after a torn tail; resuming after the torn line reads only the new entry.
    await appendFile(path, `\n${entry("three")}\n`);
    const next = await collect(path, { fromOffset: first[1]!.offset, fromLine: first[1]!.line + 1 });
    expect(
      next.map((item) => item.kind === "entry" && item.entry.type === "metadata" && item.entry.title),
    ).toEqual(["three"]);
    expect(next[0]!.line).toBe(3); // the file's own line number: the newline after the torn line is not a blank line
  });

  it("leaves an unfinished last line unread with partialLastLine: stop, so a follower resumes before it", async () => {
    const path = freshPath();
    const line = JSON.stringify(
      createTranscriptEntry({ type: "metadata", title: "later" }, { now: new Date(0) }),
    );
    await writeFile(path, `${line}\n${line.slice(0, 10)}`);
    const items = await collect(path, { partialLastLine: "stop" });
    expect(items).toHaveLength(1);
    await appendFile(path, `${line.slice(10)}\n`);
    const rest = await collect(path, { fromOffset: items[0]!.offset, partialLastLine: "stop" });
    expect(rest.map((item) => item.kind)).toEqual(["entry"]);
  });

  it("stops reading when the consumer stops, and rejects bad options and missing files with typed errors", async () => {
    const path = freshPath();
    const line = JSON.stringify(
      createTranscriptEntry({ type: "metadata", title: "x" }, { now: new Date(0) }),
    );
    await writeFile(path, `${line}\n`.repeat(50));
    let seen = 0;
    for await (const _item of streamTranscript(path, { chunkSize: 16 })) {
      if (++seen === 3) break;
    }
    expect(seen).toBe(3);
    await expect(collect(join(dir, "missing.jsonl"))).rejects.toBeInstanceOf(TranscriptNotFoundError);
    await expect(collect(path, { fromOffset: -1 })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(collect(path, { chunkSize: 0 })).rejects.toBeInstanceOf(ConfigurationError);
  });
});

describe("streamTranscript on a path it cannot read", () => {
  it("throws a TranscriptReadError, not a bare Node error", async () => {
    const path = join(dir, `unreadable-${++counter}`);
    await mkdir(path);
    const read = async () => {
      for await (const _item of streamTranscript(path)) {
        // nothing to read
      }
    };
    const error = await read().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TranscriptReadError);
    expect(error).toMatchObject({ code: "transcript_read", path });
  });
});
