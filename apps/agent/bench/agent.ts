// The agent's speed as a user feels it: start-up of `unforget -p` until its first request reaches the Anthropic
// fake (the bundle, the unbundled modules, and bare `node` as the same-run baseline), and keystroke-to-screen
// latency in the REPL while a reply streams. Run with `npx tsx bench/agent.ts` in apps/agent after a build.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { CLI_PATH } from "../test-support/run-cli.ts";

const RUNS = Number(process.env.RUNS ?? 15);
const UNBUNDLED = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "unforget-bench-"));
const home = join(root, "home");
const project = join(root, "project");
mkdirSync(home);
mkdirSync(project);
const fake = await startAnthropicFake({ defaultReply: { kind: "reply", text: "ok" } });

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Milliseconds from spawn to the first request the fake receives (or to exit, for the baseline). */
function startUp(argv: string[], waitForRequest: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const before = fake.requests.length;
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const child = spawn(process.execPath, argv, {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", HOME: home, ANTHROPIC_BASE_URL: fake.url },
      stdio: "ignore",
    });
    const poll = () => {
      if (fake.requests.length > before) {
        resolve(performance.now() - started);
        return;
      }
      timer = setTimeout(poll, 1);
    };
    if (waitForRequest) poll();
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(timer);
      if (!waitForRequest) resolve(performance.now() - started);
    });
  });
}

async function measureStartUp(label: string, argv: string[], waitForRequest: boolean) {
  await startUp(argv, waitForRequest);
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) times.push(await startUp(argv, waitForRequest));
  return { label, median: quantile(times, 0.5), p90: quantile(times, 0.9) };
}

/** Keystroke to screen while a reply streams: each typed letter, until the prompt line shows it. */
async function keystrokeLatency(): Promise<{ median: number; p95: number; samples: number }> {
  const pty = await import("@lydell/node-pty");
  const child = pty.spawn(process.execPath, [CLI_PATH], {
    name: "xterm-256color",
    cols: 120,
    rows: 40,
    cwd: project,
    env: { PATH: process.env.PATH ?? "", HOME: home, ANTHROPIC_BASE_URL: fake.url, TERM: "xterm-256color" },
  });
  let raw = "";
  child.onData((data) => {
    raw += data;
  });
  const waitFor = async (text: string, from: number) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (stripVTControlCharacters(raw.slice(from)).includes(text)) return;
      if (Date.now() > deadline)
        throw new Error(`never saw ${text}: ${stripVTControlCharacters(raw).slice(-800)}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  await waitFor("ask, or /help", 0);
  // A long reply, streamed slowly: the screen redraws while the user types.
  fake.enqueue({ kind: "reply", text: "word ".repeat(3000), delayMs: 5 });
  child.write("stream please");
  await waitFor("stream please", 0);
  child.write("\r");
  await waitFor("word word word", 0);
  const samples: number[] = [];
  let typed = "";
  for (const letter of "thequickbrownfoxjumpsoverthelazydog") {
    typed += letter;
    const from = raw.length;
    const started = performance.now();
    child.write(letter);
    await waitFor(typed.slice(-6), from);
    samples.push(performance.now() - started);
  }
  child.kill();
  return { median: quantile(samples, 0.5), p95: quantile(samples, 0.95), samples: samples.length };
}

process.stderr.write("start-up…\n");
const baseline = await measureStartUp("node -e '' (baseline)", ["-e", ""], false);
const bundled = await measureStartUp("unforget -p (bundle, as installed)", [CLI_PATH, "-p", "hi"], true);
const unbundled = await measureStartUp("unforget -p (tsc output, unbundled)", [UNBUNDLED, "-p", "hi"], true);
console.log(JSON.stringify({ baseline, bundled, unbundled }));
process.stderr.write("keystrokes…\n");
const keys = await keystrokeLatency();
await fake.close();
rmSync(root, { recursive: true, force: true });

console.log(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}, load average ${loadavg()[0]?.toFixed(1)}`,
);
console.log("| run | median (ms) | p90 (ms) | ratio to baseline |");
console.log("| --- | ---: | ---: | ---: |");
for (const row of [baseline, bundled, unbundled])
  console.log(
    `| ${row.label} | ${row.median.toFixed(0)} | ${row.p90.toFixed(0)} | ${(row.median / baseline.median).toFixed(1)}× |`,
  );
console.log(
  `Keystroke to screen while a reply streams: median ${keys.median.toFixed(1)} ms, p95 ${keys.p95.toFixed(1)} ms (${keys.samples} keys)`,
);
