// The agent's speed as a user feels it: start-up of `unforget -p` until its first request reaches the Anthropic
// fake (the bundle, the unbundled modules, the bundle with two MCP servers configured with and without
// `--mcp-nonblocking`, and bare `node` as the same-run baseline), and keystroke-to-screen
// latency in the REPL while a reply streams. Run with `npx tsx bench/agent.ts [start-up] [keys]` in apps/agent after
// a build (both parts by default). `BEFORE_CLI=/other/checkout/apps/agent/dist/bundle/cli.js` adds that build's
// start-up to the same run, for a before/after under the same load; `NODE22=/path/to/node` adds the baseline and the
// bundle on that Node too (22.1+ keeps a compile cache, which `cli.ts` turns on); `QUICK=1` leaves out the unbundled and
// MCP rows (a before/after of the bundle alone). The runs are interleaved, one of each per round, so that a machine
// whose load changes during the run weighs on every row alike.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { CLI_PATH } from "../test-support/run-cli.ts";

const RUNS = Number(process.env.RUNS ?? 15);
const UNBUNDLED = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const MCP_TEST_SERVER = fileURLToPath(
  new URL("../../../packages/mcp/src/__fixtures__/test-server.mjs", import.meta.url),
);
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

/**
 * Loaded first into every measured process: at exit it writes the process's CPU time (user + system, all threads)
 * to file descriptor 3. Wall-clock time on a shared machine is mostly waiting for a core; CPU time is the work.
 */
const CPU_AT_EXIT = `data:text/javascript,${encodeURIComponent(
  'import { writeSync } from "node:fs"; process.on("exit", () => { const { user, system } = process.cpuUsage(); writeSync(3, String((user + system) / 1000)); });',
)}`;

/** One run: milliseconds from spawn to the first request the fake receives (to exit, without one), and CPU ms. */
function startUp(
  node: string,
  argv: string[],
  waitForRequest: boolean,
): Promise<{ wall: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const before = fake.requests.length;
    const started = performance.now();
    let wall: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const child = spawn(node, ["--import", CPU_AT_EXIT, ...argv], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", HOME: home, ANTHROPIC_BASE_URL: fake.url },
      stdio: ["ignore", "ignore", "ignore", "pipe"],
    });
    let cpu = "";
    child.stdio[3]?.on("data", (chunk: Buffer) => {
      cpu += chunk.toString();
    });
    const poll = () => {
      if (fake.requests.length > before) {
        wall = performance.now() - started;
        return;
      }
      timer = setTimeout(poll, 1);
    };
    if (waitForRequest) poll();
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      // Exited without a request: a broken build or setup, which must not leave the poll running forever.
      if (waitForRequest && wall === undefined)
        reject(new Error(`${argv.join(" ")} exited (${code}) before any request`));
      else resolve({ wall: wall ?? performance.now() - started, cpu: Number(cpu) });
    });
  });
}

interface StartUpCase {
  label: string;
  node: string;
  /** The Node version: each row is compared with bare `node` of its own version. */
  version: string;
  argv: string[];
  waitForRequest: boolean;
}

/** Each case once as warm-up (it fills a compile cache), then `RUNS` rounds of one run of each, in turn. */
async function measureStartUp(cases: readonly StartUpCase[]) {
  const samples = cases.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (const item of cases) await startUp(item.node, item.argv, item.waitForRequest);
  for (let round = 0; round < RUNS; round++) {
    for (const [index, item] of cases.entries()) {
      const run = await startUp(item.node, item.argv, item.waitForRequest);
      samples[index]?.wall.push(run.wall);
      samples[index]?.cpu.push(run.cpu);
    }
  }
  return cases.map((item, index) => ({
    label: item.label,
    version: item.version,
    baseline: item.argv[0] === "-e" && item.argv[1] === "",
    median: quantile(samples[index]?.wall ?? [], 0.5),
    p90: quantile(samples[index]?.wall ?? [], 0.9),
    cpu: quantile(samples[index]?.cpu ?? [], 0.5),
  }));
}

/** Keystrokes to screen: each typed letter until the prompt line shows it, at an idle prompt and while a reply streams. */
async function keystrokeLatency() {
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
  const typeLetters = async (letters: string) => {
    const samples: number[] = [];
    let typed = "";
    for (const letter of letters) {
      typed += letter;
      const from = raw.length;
      const started = performance.now();
      child.write(letter);
      await waitFor(typed.slice(-6), from);
      samples.push(performance.now() - started);
    }
    return samples;
  };
  const summary = (samples: number[]) => ({
    median: quantile(samples, 0.5),
    p95: quantile(samples, 0.95),
    samples: samples.length,
  });
  const letters = "thequickbrownfoxjumpsoverthelazydog";
  await waitFor("ask, or /help", 0);
  const idle = await typeLetters(letters);
  let from = raw.length;
  child.write("\u0015"); // Ctrl-U: the line is cleared.
  await waitFor("ask, or /help", from);
  // A long reply, streamed slowly (5 ms between events): the screen redraws while the user types.
  fake.enqueue({ kind: "reply", text: "word ".repeat(3000), delayMs: 5 });
  from = raw.length;
  child.write("stream please\r");
  await waitFor("word word word", from);
  const streaming = await typeLetters(letters);
  // The reply was still streaming when the last letter showed: the placeholder of a finished turn is not back.
  const stillStreaming = !stripVTControlCharacters(raw.slice(from)).includes("ask, or /help");
  child.kill();
  return { idle: summary(idle), streaming: { ...summary(streaming), stillStreaming } };
}

const parts = process.argv.slice(2);
const runs = (part: string) => parts.length === 0 || parts.includes(part);
console.log(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}, load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" / ")} (1 / 5 / 15 min) at the start, RUNS=${RUNS}`,
);
if (runs("start-up")) {
  process.stderr.write("start-up…\n");
  const node = process.execPath;
  const version = process.version;
  // The least any client does: Node's fetch sends one request like the first model call and reads the answer.
  const oneFetch = (on: string, nodeVersion: string): StartUpCase => ({
    label: `a one-request \`fetch\` script (${nodeVersion})`,
    node: on,
    version: nodeVersion,
    argv: [
      "--input-type=module",
      "-e",
      `await fetch(${JSON.stringify(`${fake.url}/v1/messages`)}, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" }, body: JSON.stringify({ model: "claude-sonnet-4-6", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }) }).then((response) => response.text());`,
    ],
    waitForRequest: true,
  });
  const cases: StartUpCase[] = [
    {
      label: `\`node -e ''\` (baseline, ${version})`,
      node,
      version,
      argv: ["-e", ""],
      waitForRequest: false,
    },
    oneFetch(node, version),
  ];

  const before = process.env.BEFORE_CLI;
  const unforget = (label: string, on: string, nodeVersion: string, cli: string): StartUpCase => ({
    label,
    node: on,
    version: nodeVersion,
    argv: [cli, "-p", "hi"],
    waitForRequest: true,
  });
  const quick = process.env.QUICK === "1";
  if (before) cases.push(unforget(`\`unforget -p\` before (${version})`, node, version, before));
  cases.push(
    unforget(`\`unforget -p\` (the esbuild bundle, as installed, ${version})`, node, version, CLI_PATH),
  );
  if (!quick)
    cases.push(unforget(`\`unforget -p\` (tsc output, unbundled, ${version})`, node, version, UNBUNDLED));
  // Two MCP servers configured: one written with the MCP SDK (as most are), one whose command does not exist.
  const mcp = JSON.stringify({
    mcpServers: {
      tester: { command: node, args: [MCP_TEST_SERVER] },
      missing: { command: join(project, "no-such-mcp-server"), args: [] },
    },
  });
  for (const nonblocking of quick ? [] : [false, true])
    cases.push({
      ...unforget(
        `\`unforget -p\` with two MCP servers${nonblocking ? ", `--mcp-nonblocking`" : ""} (the bundle, ${version})`,
        node,
        version,
        CLI_PATH,
      ),
      argv: [CLI_PATH, "-p", "hi", "--mcp-config", mcp, ...(nonblocking ? ["--mcp-nonblocking"] : [])],
    });
  if (before && !quick)
    cases.push({
      ...unforget(
        `\`unforget -p\` with two MCP servers, \`--mcp-nonblocking\`, before (${version})`,
        node,
        version,
        before,
      ),
      argv: [before, "-p", "hi", "--mcp-config", mcp, "--mcp-nonblocking"],
    });
  const node22 = process.env.NODE22;
  if (node22) {
    const other = execFileSync(node22, ["--version"], { encoding: "utf8" }).trim();
    cases.push({
      label: `\`node -e ''\` (baseline, ${other})`,
      node: node22,
      version: other,
      argv: ["-e", ""],
      waitForRequest: false,
    });
    cases.push(oneFetch(node22, other));
    if (before) cases.push(unforget(`\`unforget -p\` before (${other})`, node22, other, before));
    cases.push(unforget(`\`unforget -p\` (the bundle, ${other}, compile cache)`, node22, other, CLI_PATH));
  }
  const rows = await measureStartUp(cases);
  console.log(
    "| run | to the first request, median (ms) | p90 (ms) | ratio to `node -e ''` | CPU, whole run (ms) | CPU ratio |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const row of rows) {
    const baseline = rows.find((other) => other.baseline && other.version === row.version);
    console.log(
      `| ${row.label} | ${row.median.toFixed(0)} | ${row.p90.toFixed(0)} | ${(row.median / (baseline?.median ?? 1)).toFixed(1)}× | ${row.cpu.toFixed(0)} | ${(row.cpu / (baseline?.cpu ?? 1)).toFixed(1)}× |`,
    );
  }
}
if (runs("keys")) {
  process.stderr.write("keystrokes…\n");
  const keys = await keystrokeLatency();
  console.log("| typing | median (ms) | p95 (ms) | keys |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const [label, row] of [
    ["at an idle prompt", keys.idle],
    [
      `while a reply streams${keys.streaming.stillStreaming ? "" : " (the reply ended first!)"}`,
      keys.streaming,
    ],
  ] as const)
    console.log(`| ${label} | ${row.median.toFixed(1)} | ${row.p95.toFixed(1)} | ${row.samples} |`);
}
console.log(`load average ${loadavg()[0]?.toFixed(1)} at the end`);
await fake.close();
rmSync(root, { recursive: true, force: true });
