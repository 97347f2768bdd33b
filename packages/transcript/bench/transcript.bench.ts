/**
 * Transcript I/O throughput, each compared with a plain baseline measured in the same run.
 * Run: `cd packages/core && npx tsx bench/transcript.bench.ts` (results go to BENCHMARKS.md by hand).
 */
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { createTranscriptEntry, readTranscript, TranscriptWriter } from "../src/index.ts";

const ENTRIES = 5000;
const ROUNDS = 5;

async function median(run: () => Promise<void>): Promise<number> {
  await run(); // warm-up
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function sampleInputs() {
  const text = "Tool output line with some code `const x = 1;` and prose. ".repeat(8);
  return Array.from({ length: ENTRIES }, (_, index) =>
    index % 100 === 99
      ? {
          type: "compact_boundary" as const,
          trigger: "auto" as const,
          tokensBefore: 1000,
          messagesSummarized: 99,
          logicalParentId: null,
        }
      : {
          type: "message" as const,
          message: createMessage(index % 2 === 0 ? "user" : "assistant", `${index} ${text}`),
        },
  );
}

const rows: { case: string; ms: number; perItemUs: number; ratio: string }[] = [];
function record(name: string, ms: number, items: number, baselineMs: number) {
  rows.push({
    case: name,
    ms: Number(ms.toFixed(1)),
    perItemUs: Number(((ms * 1000) / items).toFixed(2)),
    ratio: `${(ms / baselineMs).toFixed(2)}×`,
  });
}

const dir = await mkdtemp(join(tmpdir(), "unforget-bench-"));
try {
  const inputs = sampleInputs();
  let file = 0;
  const next = () => join(dir, `t${file++}.jsonl`);

  const rawWrite = await median(async () => {
    const handle = await open(next(), "a");
    for (const input of inputs) {
      await handle.write(`${JSON.stringify(createTranscriptEntry(input))}\n`);
    }
    await handle.close();
  });
  record("baseline: JSON.stringify + write() per line on an O_APPEND fd", rawWrite, ENTRIES, rawWrite);
  for (const fsync of ["never", "boundaries"] as const) {
    const ms = await median(async () => {
      const writer = await TranscriptWriter.open(next(), { fsync });
      for (const input of inputs) await writer.append(input);
      await writer.close();
    });
    record(`TranscriptWriter.append, fsync "${fsync}" (boundary every 100)`, ms, ENTRIES, rawWrite);
  }
  const concurrent = await median(async () => {
    const writer = await TranscriptWriter.open(next(), { fsync: "never" });
    await Promise.all(inputs.map((input) => writer.append(input)));
    await writer.close();
  });
  record('TranscriptWriter.append, 5000 concurrent calls, fsync "never"', concurrent, ENTRIES, rawWrite);

  const path = next();
  const writer = await TranscriptWriter.open(path, { fsync: "never" });
  await writer.append(inputs);
  await writer.close();
  const rawRead = await median(async () => {
    const text = await readFile(path, "utf8");
    for (const line of text.split("\n")) if (line.length > 0) JSON.parse(line);
  });
  record("baseline: readFile + JSON.parse per line", rawRead, ENTRIES, rawRead);
  const validated = await median(async () => {
    await readTranscript(path);
  });
  record("readTranscript (validate + normalise)", validated, ENTRIES, rawRead);

  console.table(rows);
} finally {
  await rm(dir, { recursive: true, force: true });
}
