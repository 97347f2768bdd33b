// 1 GB of output streamed by one local_bash task and tailed by two readers in the manager's process:
// the manager's RSS growth while it streams, and offset-read throughput against `cat` of the same file.
// Usage: tsx bench/output-throughput.ts [bytes] (default 1 GB). Prints a Markdown table for BENCHMARKS.md.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTaskManager, type TaskManager } from "../src/index.ts";

const BYTES = Number(process.argv[2] ?? 1_000_000_000);
const PRINT_LINES = fileURLToPath(new URL("../src/__fixtures__/print-lines.mjs", import.meta.url));
const ROUNDS = 3;
const MB = 1024 * 1024;

/** Follows a task's output to the end with offset reads; resolves the bytes read. */
async function tail(manager: TaskManager, id: string): Promise<number> {
  let offset = 0;
  for (;;) {
    const chunk = await manager.readOutput(id, offset);
    offset = chunk.nextOffset;
    if (chunk.done) return offset;
    if (chunk.data === "") await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The floor for any reader that hands out text: one open file, positional 256 KiB reads, UTF-8 decoding. */
async function plainNodeRead(path: string): Promise<number> {
  const handle = await open(path, "r");
  const buffer = Buffer.allocUnsafe(262_144);
  let position = 0;
  let characters = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    characters += buffer.toString("utf8", 0, bytesRead).length;
    position += bytesRead;
  }
  await handle.close();
  return characters;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed<T>(run: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

const dir = await mkdtemp(join(tmpdir(), "tasks-bench-"));
try {
  const manager = await createTaskManager({ dir });
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);

  // Phase 1: the task writes while two readers follow it.
  const streaming = await timed(async () => {
    const id = await manager.start({ type: "local_bash", command: `node ${PRINT_LINES} ${BYTES}` });
    const read = await Promise.all([tail(manager, id), tail(manager, id)]);
    return { id, read };
  });
  clearInterval(sampler);
  const { id, read } = streaming.value;
  const info = await manager.get(id);
  if (read.some((bytes) => bytes !== info.outputBytes))
    throw new Error(`a reader got ${read} of ${info.outputBytes} bytes`);

  // Phase 2: the finished file, read by `cat` and by readOutput (one reader, then two at once), alternating.
  const cat: number[] = [];
  const plain: number[] = [];
  const one: number[] = [];
  const two: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    cat.push((await timed(() => spawnSync("sh", ["-c", `cat '${info.outputPath!}' > /dev/null`]))).ms);
    plain.push((await timed(() => plainNodeRead(info.outputPath!))).ms);
    one.push((await timed(() => tail(manager, id))).ms);
    two.push((await timed(() => Promise.all([tail(manager, id), tail(manager, id)]))).ms);
  }
  await manager.close();

  const size = info.outputBytes;
  const rate = (ms: number, readers = 1) => (readers * size) / MB / (ms / 1000);
  const catRate = rate(median(cat));
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const catVersion = execFileSync("cat", ["--version"], { encoding: "utf8" }).split("\n")[0];
  console.log(
    `Machine: ${cpus().length} cores, ${cpu}, Node ${process.version}, ${catVersion}; ${(size / MB).toFixed(0)} MB of output.`,
  );
  console.log("");
  console.log("| measure | value |");
  console.log("| --- | --- |");
  console.log(
    `| manager RSS before / peak while streaming | ${(baseline / MB).toFixed(1)} MB / ${(peak / MB).toFixed(1)} MB |`,
  );
  console.log(
    `| **RSS growth while streaming** (target ≤ 64 MB) | **${((peak - baseline) / MB).toFixed(1)} MB** |`,
  );
  console.log(
    `| streaming: task wrote and both readers followed to done | ${(streaming.ms / 1000).toFixed(1)} s (${rate(streaming.ms).toFixed(0)} MB/s per reader) |`,
  );
  console.log(
    `| \`cat file > /dev/null\`, finished file (median of ${ROUNDS}) | ${catRate.toFixed(0)} MB/s |`,
  );
  const plainRate = rate(median(plain));
  console.log(
    `| plain Node reader: fs read + UTF-8 decode, 256 KiB (median of ${ROUNDS}) | ${plainRate.toFixed(0)} MB/s = ${(plainRate / catRate).toFixed(2)}× cat |`,
  );
  console.log(
    `| readOutput, one reader (median of ${ROUNDS}) | ${rate(median(one)).toFixed(0)} MB/s = **${(rate(median(one)) / catRate).toFixed(2)}× cat** = ${(rate(median(one)) / plainRate).toFixed(2)}× the plain reader |`,
  );
  console.log(
    `| readOutput, two readers at once, total (median of ${ROUNDS}) | ${rate(median(two), 2).toFixed(0)} MB/s = **${(rate(median(two), 2) / catRate).toFixed(2)}× cat** |`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
