import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  completeUtf8Length,
  readOutputChunk as readChunk,
  readFileBytes,
  readOutputTail,
} from "./task-output.ts";

const readOutputChunk = (path: string, offset: number, maxBytes: number, ended: boolean) =>
  readChunk((from, max) => readFileBytes(path, from, max), offset, maxBytes, ended);

import { createOutputWriter } from "./task-output-writer.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tasks-output-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Reads to the end in chunks; no chunk may hold U+FFFD (a split character) unless the file itself does. */
async function readAll(path: string, chunk: number, ended: boolean, written = "") {
  const pieces: string[] = [];
  let offset = 0;
  for (;;) {
    const result = await readOutputChunk(path, offset, chunk, ended);
    expect(Buffer.byteLength(result.data)).toBe(result.nextOffset - offset);
    if (!written.includes("\uFFFD")) expect(result.data).not.toContain("\uFFFD");
    pieces.push(result.data);
    if (result.done || result.nextOffset === offset)
      return { text: pieces.join(""), offset: result.nextOffset, done: result.done };
    offset = result.nextOffset;
  }
}

describe("readOutputChunk", () => {
  it("never splits a character, whatever the chunk size, and offsets count bytes exactly", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "grapheme", maxLength: 300 }),
        fc.integer({ min: 4, max: 64 }),
        async (text, chunk) => {
          const path = join(dir, "property.log");
          await writeFile(path, text);
          const read = await readAll(path, chunk, true, text);
          expect(read.text).toBe(text);
          expect(read.offset).toBe(Buffer.byteLength(text));
          expect(read.done).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("holds back a character whose bytes have not all been written, then delivers it", async () => {
    const path = join(dir, "partial.log");
    const snowman = Buffer.from("a☃");
    await writeFile(path, snowman.subarray(0, 2));
    const first = await readOutputChunk(path, 0, 64, false);
    expect(first).toEqual({ data: "a", nextOffset: 1, done: false });
    await appendFile(path, snowman.subarray(2));
    expect(await readOutputChunk(path, 1, 64, false)).toEqual({ data: "☃", nextOffset: 4, done: false });
    expect(await readOutputChunk(path, 4, 64, true)).toEqual({ data: "", nextOffset: 4, done: true });
  });

  it("hands out a dangling byte once the writer has stopped, so a reader always reaches done", async () => {
    const path = join(dir, "dangling.log");
    await writeFile(path, Buffer.from([0x61, 0xe2, 0x98]));
    const read = await readOutputChunk(path, 0, 64, true);
    expect(read).toMatchObject({ nextOffset: 3, done: true });
  });

  it("a missing file reads as empty", async () => {
    expect(await readOutputChunk(join(dir, "missing.log"), 0, 64, false)).toEqual({
      data: "",
      nextOffset: 0,
      done: false,
    });
  });

  it("completeUtf8Length cuts only incomplete trailing characters", () => {
    const bytes = Buffer.from("é😀");
    expect(completeUtf8Length(bytes, bytes.length)).toBe(6);
    expect(completeUtf8Length(bytes, 5)).toBe(2);
    expect(completeUtf8Length(bytes, 3)).toBe(2);
    expect(completeUtf8Length(bytes, 1)).toBe(0);
  });
});

describe("readOutputTail", () => {
  it("returns the last bytes starting on a character boundary", async () => {
    const path = join(dir, "tail.log");
    await writeFile(path, `${"é".repeat(400)}Continue? [y/N] `);
    const tail = await readOutputTail(path, 500);
    expect(tail.endsWith("Continue? [y/N] ")).toBe(true);
    expect(tail).not.toContain("\uFFFD");
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(500);
  });
});

describe("createOutputWriter", () => {
  it("appends in call order and refuses writes after close", async () => {
    const path = join(dir, "writer.log");
    const writer = createOutputWriter(path, "agent-x");
    await Promise.all(Array.from({ length: 50 }, (_, i) => writer.line(`line ${i}`)));
    await writer.close();
    const read = await readAll(path, 1024, true);
    expect(read.text.split("\n").slice(0, -1)).toEqual(Array.from({ length: 50 }, (_, i) => `line ${i}`));
    await expect(writer.write("late")).rejects.toMatchObject({ code: "task_state" });
  });
});
