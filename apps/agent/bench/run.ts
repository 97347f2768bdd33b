// Replay speed: the largest corpus session at a 32K window beside the time to merely import it, and the
// demo session. Run with `npx -y pnpm@10.34.9 bench` in apps/agent (after a build). Figures go to BENCHMARKS.md.
import { execFileSync } from "node:child_process";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { importSessionFile } from "@unforget/importers";
import { listCorpusSessions } from "@unforget/testing/corpus";
import { loadSession } from "../src/load-session.ts";
import { replaySession } from "../src/replay/replay-session.ts";
import { CLI_PATH } from "../test-support/run-cli.ts";

const RUNS = 7;
/** The demo session the build generated. */
const DEMO = fileURLToPath(new URL("../dist/demo/demo-session.jsonl", import.meta.url));

async function median(run: () => Promise<unknown> | unknown): Promise<number> {
  await run();
  const times: number[] = [];
  for (let index = 0; index < RUNS; index++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** The corpus session (one run of a multi-run file counts alone) with the most characters of messages. */
async function largestCorpusSession(): Promise<{ argument: string; label: string }> {
  let best: { argument: string; label: string; size: number } | undefined;
  for (const session of listCorpusSessions()) {
    const imported = await importSessionFile(session.path);
    const runs =
      imported.instances.length > 0
        ? imported.instances.map((run) => ({ suffix: `#${run.line}`, messages: run.result.messages }))
        : [{ suffix: "", messages: imported.messages }];
    for (const run of runs) {
      const size = JSON.stringify(run.messages).length;
      const label = `${session.relativePath}${run.suffix}`;
      if (!best || size > best.size) best = { argument: `${session.path}${run.suffix}`, label, size };
    }
  }
  return best!;
}

const rows: string[] = [];
async function measure(label: string, argument: string, window: number): Promise<void> {
  const session = await loadSession(argument);
  const importMs = await median(() => loadSession(argument));
  let calls = 0;
  const replayMs = await median(async () => {
    calls = (await replaySession(session, { window })).calls.length;
  });
  const processMs = await median(() =>
    execFileSync(process.execPath, [CLI_PATH, "replay", argument, "--window", String(window), "--json"], {
      stdio: ["ignore", "ignore", "ignore"],
      env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
    }),
  );
  rows.push(
    `| ${label} | ${session.messages.length} | ${calls} | ${window / 1000}K | ${importMs.toFixed(1)} ms | ${replayMs.toFixed(0)} ms | ${(replayMs / importMs).toFixed(1)}× | ${processMs.toFixed(0)} ms |`,
  );
}

const largest = await largestCorpusSession();
await measure(`${largest.label} (largest corpus session)`, largest.argument, 32_000);
await measure(`${largest.label}`, largest.argument, 16_000);
await measure("demo session", DEMO, 32_000);
await measure("demo session", DEMO, 200_000);

console.log(
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}; median of ${RUNS} runs after a warm-up`,
);
console.log(
  "| session | messages | calls | window | import | replay (import excluded) | replay / import | whole CLI process (--json) |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const row of rows) console.log(row);
