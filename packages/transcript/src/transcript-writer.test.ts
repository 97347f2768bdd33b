import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TRANSCRIPT_FORMAT_VERSION } from "./transcript-entry.ts";
import { TranscriptWriteError } from "./transcript-errors.ts";
import { readTranscript } from "./transcript-reader.ts";
import { TranscriptWriter } from "./transcript-writer.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-writer-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("TranscriptWriter", () => {
  it("creates parent folders and writes one JSON line per entry, filling v, id, timestamp and sessionId", async () => {
    const path = join(dir, "a", "b", "session.jsonl");
    const writer = await TranscriptWriter.open(path, { sessionId: "s1" });
    const message = createMessage("user", "hello\nworld", { id: "m1" });
    const entry = await writer.appendMessage(message);
    const [meta] = await writer.append({ type: "metadata", title: "first" });
    await writer.close();

    expect(entry).toMatchObject({ v: TRANSCRIPT_FORMAT_VERSION, id: "m1", sessionId: "s1", type: "message" });
    expect(Number.isNaN(Date.parse(entry.timestamp))).toBe(false);
    expect(meta?.id).toMatch(/^metadata_/);
    const text = await readFile(path, "utf8");
    const lines = text.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(JSON.parse(lines[0]!)).toEqual(JSON.parse(JSON.stringify(entry)));
  });

  it("keeps fields the caller set and lets an entry's own sessionId win", async () => {
    const path = join(dir, "s.jsonl");
    const writer = await TranscriptWriter.open(path, { sessionId: "default" });
    const [entry] = await writer.append({
      type: "summary",
      kind: "title",
      text: "T",
      id: "given",
      timestamp: "2020-01-01T00:00:00.000Z",
      sessionId: "other",
    });
    await writer.close();
    expect(entry).toEqual({
      type: "summary",
      kind: "title",
      text: "T",
      v: 1,
      id: "given",
      timestamp: "2020-01-01T00:00:00.000Z",
      sessionId: "other",
    });
  });

  it("keeps call order for many concurrent appends and batch appends stay contiguous", async () => {
    const path = join(dir, "order.jsonl");
    const writer = await TranscriptWriter.open(path, { fsync: "never" });
    const pending: Promise<unknown>[] = [];
    for (let index = 0; index < 50; index++) {
      if (index % 10 === 0) {
        pending.push(
          writer.append([
            { type: "metadata", id: `batch-${index}-a` },
            { type: "metadata", id: `batch-${index}-b` },
          ]),
        );
      }
      pending.push(writer.append({ type: "metadata", id: `e${index}` }));
    }
    await Promise.all(pending);
    await writer.close();
    const { entries, problems } = await readTranscript(path);
    expect(problems).toEqual([]);
    const expected: string[] = [];
    for (let index = 0; index < 50; index++) {
      if (index % 10 === 0) expected.push(`batch-${index}-a`, `batch-${index}-b`);
      expected.push(`e${index}`);
    }
    expect(entries.map((entry) => entry.id)).toEqual(expected);
  });

  it("isolates a torn last line left by a crash before appending", async () => {
    const path = join(dir, "torn.jsonl");
    await writeFile(path, '{"v":1,"type":"metadata","id":"ok","timestamp":"t"}\n{"v":1,"type":"mess');
    const writer = await TranscriptWriter.open(path);
    await writer.append({ type: "metadata", id: "after" });
    await writer.close();
    const { entries, problems } = await readTranscript(path, { quarantine: false });
    expect(entries.map((entry) => entry.id)).toEqual(["ok", "after"]);
    expect(problems).toEqual([
      expect.objectContaining({ kind: "invalid_json", line: 2, raw: '{"v":1,"type":"mess' }),
    ]);
  });

  it("appends to an existing file without rewriting what is there", async () => {
    const path = join(dir, "existing.jsonl");
    const first = await TranscriptWriter.open(path);
    await first.append({ type: "metadata", id: "one" });
    await first.close();
    const before = await readFile(path, "utf8");
    const second = await TranscriptWriter.open(path);
    await second.append({ type: "metadata", id: "two" });
    await second.close();
    const after = await readFile(path, "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect((await readTranscript(path)).entries.map((entry) => entry.id)).toEqual(["one", "two"]);
  });

  it("rejects appends after close and unserialisable entries with TranscriptWriteError, writing nothing", async () => {
    const path = join(dir, "closed.jsonl");
    const writer = await TranscriptWriter.open(path);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(writer.append({ type: "metadata", data: circular })).rejects.toBeInstanceOf(
      TranscriptWriteError,
    );
    await writer.close();
    await writer.close();
    await expect(writer.append({ type: "metadata" })).rejects.toThrow(/closed/);
    expect((await stat(path)).size).toBe(0);
  });

  it("fails to open with TranscriptWriteError when the parent is a file", async () => {
    const blocker = join(dir, "file");
    await writeFile(blocker, "x");
    await expect(TranscriptWriter.open(join(blocker, "session.jsonl"))).rejects.toBeInstanceOf(
      TranscriptWriteError,
    );
  });

  it("syncs on demand and in every fsync mode still writes the entries", async () => {
    for (const fsync of ["always", "boundaries", "never"] as const) {
      const path = join(dir, `${fsync}.jsonl`);
      const writer = await TranscriptWriter.open(path, { fsync });
      await writer.append({
        type: "compact_boundary",
        trigger: "auto",
        tokensBefore: 10,
        messagesSummarized: 1,
        logicalParentId: null,
      });
      await writer.sync();
      await writer.close();
      expect((await readTranscript(path)).entries.map((entry) => entry.type)).toEqual(["compact_boundary"]);
    }
  });
});
