/**
 * Transcript I/O and importer throughput, each compared with a plain baseline measured in the same run.
 * Run: `cd packages/core && npx tsx bench/transcript.bench.ts` (results go to BENCHMARKS.md by hand).
 */
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createMessage,
  createTranscriptEntry,
  importClaudeCodeTranscript,
  importMiniSweAgentTrajectory,
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
  importSweAgentTrajectory,
  readTranscript,
  TranscriptWriter,
} from "../src/index.ts";

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

  const corpus = process.env.UNFORGET_CORPUS_DIR ?? resolve(findRoot(), "..", "shared", "corpus");
  if (existsSync(corpus)) {
    const files = listFiles(corpus).filter(
      (path) =>
        /\.(jsonl|json|traj)$/.test(path) && /(claude-code|sweagent|mini-swe-agent|openhands)\//.test(path),
    );
    const texts = await Promise.all(
      files.map(async (path) => ({ path, text: await readFile(path, "utf8") })),
    );
    const bytes = texts.reduce((sum, item) => sum + Buffer.byteLength(item.text), 0);
    const parseOnly = await median(async () => {
      for (const { text } of texts) {
        for (const line of text.split("\n")) {
          if (line.trim().length > 0) {
            try {
              JSON.parse(line);
            } catch {
              JSON.parse(text);
              break;
            }
          }
        }
      }
    });
    record(
      `baseline: JSON.parse of the ${files.length} corpus files (${(bytes / 1e6).toFixed(1)} MB)`,
      parseOnly,
      files.length,
      parseOnly,
    );
    const importAll = await median(async () => {
      for (const { path, text } of texts) {
        if (path.includes("claude-code/")) importClaudeCodeTranscript(text);
        else if (path.includes("sweagent/")) importSweAgentTrajectory(text);
        else if (path.includes("mini-swe-agent/")) importMiniSweAgentTrajectory(text);
        else if (path.endsWith(".jsonl")) importOpenHandsEvaluationOutput(text);
        else importOpenHandsTrajectory(text);
      }
    });
    record("import every corpus session (parse, convert, check, repair)", importAll, files.length, parseOnly);
  }
  console.table(rows);
} finally {
  await rm(dir, { recursive: true, force: true });
}

function findRoot(): string {
  let current = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(current, "pnpm-workspace.yaml")) && dirname(current) !== current)
    current = dirname(current);
  return current;
}

function listFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}
