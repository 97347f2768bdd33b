/**
 * Importer throughput on the corpus, compared with a plain `JSON.parse` of the same files in the same run.
 * Run: `npx pnpm@10.34.9 --filter @unforget/importers bench` (results go to BENCHMARKS.md by hand).
 */
import { listCorpusSessions, loadCorpusFile } from "@unforget/testing";
import {
  importClaudeCodeTranscript,
  importMiniSweAgentTrajectory,
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
  importSweAgentTrajectory,
} from "../src/index.ts";

const ROUNDS = 5;

function median(run: () => void): number {
  run(); // warm-up
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const rows: { case: string; ms: number; ratio: string }[] = [];
function record(name: string, ms: number, baselineMs: number) {
  rows.push({ case: name, ms: Number(ms.toFixed(1)), ratio: `${(ms / baselineMs).toFixed(2)}×` });
}

const sessions = listCorpusSessions().map((session) => ({ ...session, text: loadCorpusFile(session.path) }));
const bytes = sessions.reduce((sum, session) => sum + Buffer.byteLength(session.text), 0);
const parseOnly = median(() => {
  for (const { text } of sessions) {
    try {
      JSON.parse(text);
    } catch {
      for (const line of text.split("\n")) if (line.trim().length > 0) JSON.parse(line);
    }
  }
});
record(
  `baseline: JSON.parse of the ${sessions.length} corpus session files (${(bytes / 1e6).toFixed(1)} MB)`,
  parseOnly,
  parseOnly,
);
const importAll = median(() => {
  for (const { format, text } of sessions) {
    if (format === "claude-code") importClaudeCodeTranscript(text);
    else if (format === "swe-agent") importSweAgentTrajectory(text);
    else if (format === "mini-swe-agent") importMiniSweAgentTrajectory(text);
    else if (format === "openhands-evaluation") importOpenHandsEvaluationOutput(text);
    else importOpenHandsTrajectory(text);
  }
});
record("import every corpus session (parse, convert, check, repair)", importAll, parseOnly);
console.table(rows);
