// Proves that a turbo run really ran the test suites on the Node version it names, and counts them. Reads the run
// summary turbo wrote (`--summarize`, or TURBO_RUN_SUMMARY=true) in .turbo/runs/ after `--since` (ms since the
// epoch) and fails when:
//  - no test task ran;
//  - a test task was replayed from turbo's cache (its status is not MISS): replayed logs are another run's result,
//    possibly another Node's, which is how the Node 22 and 24 lines once repeated Node 20's;
//  - a test task's hash was not computed with UNFORGET_NODE_VERSION set to `--node` (turbo records the value's
//    SHA-256): the run did not name the Node it ran on, or named another.
// Then prints one line: `node v22.23.3: 26 test tasks ran, none replayed from turbo's cache: N passed, N failed,
// N skipped`, the counts summed from each task's own vitest log. A failing suite is the caller's to report (turbo's
// exit code); this check fails only when a run cannot be trusted.
// Usage: node .ci/check-test-runs.mjs --node v22.23.3 --since 1795802419373
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, stripVTControlCharacters } from "node:util";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { node: { type: "string" }, since: { type: "string" } } });
const node = values.node ?? process.version;
const since = Number(values.since ?? 0);

function fail(message) {
  process.stderr.write(`node ${node}: ${message}\n`);
  process.exit(1);
}

const runs = join(ROOT, ".turbo", "runs");
const summaries = existsSync(runs)
  ? readdirSync(runs)
      .filter((file) => file.endsWith(".json"))
      .map((file) => ({ path: join(runs, file), at: statSync(join(runs, file)).mtimeMs }))
      .filter((summary) => summary.at >= since)
      .sort((a, b) => b.at - a.at)
  : [];
if (summaries.length === 0) {
  fail(
    `no turbo run summary was written in ${runs} by this run: run turbo with --summarize (or TURBO_RUN_SUMMARY=true).`,
  );
}
const summary = JSON.parse(readFileSync(summaries[0].path, "utf8"));
const tests = summary.tasks.filter((task) => task.task === "test");
if (tests.length === 0) fail(`the run (${summaries[0].path}) ran no test task.`);

const named = `UNFORGET_NODE_VERSION=${createHash("sha256").update(node).digest("hex")}`;
const replayed = tests.filter((task) => task.cache?.status !== "MISS");
if (replayed.length > 0) {
  fail(
    `${replayed.length} of ${tests.length} test tasks were replayed from turbo's cache, not run (${replayed.map((task) => task.package).join(", ")}): their results may be another run's, on another Node. Run the tests with --force (TURBO_FORCE=true).`,
  );
}
const unnamed = tests.filter((task) => !(task.environmentVariables?.configured ?? []).includes(named));
if (unnamed.length > 0) {
  fail(
    `${unnamed.length} test tasks did not run with UNFORGET_NODE_VERSION=${node} in their hash (${unnamed.map((task) => task.package).join(", ")}): set it to the Node version that runs them (\`node --version\`).`,
  );
}

let passed = 0;
let failed = 0;
let skipped = 0;
const silent = [];
for (const task of tests) {
  const log = join(ROOT, task.logFile ?? join(task.directory, ".turbo", "turbo-test.log"));
  const text = existsSync(log) ? stripVTControlCharacters(readFileSync(log, "utf8")) : "";
  const line = text.split("\n").find((candidate) => /^\s*Tests\s+\d/.test(candidate));
  if (line === undefined) {
    silent.push(task.package);
    continue;
  }
  passed += Number(/(\d+) passed/.exec(line)?.[1] ?? 0);
  failed += Number(/(\d+) failed/.exec(line)?.[1] ?? 0);
  skipped += Number(/(\d+) skipped/.exec(line)?.[1] ?? 0);
}
const crashed = tests.filter((task) => task.execution?.exitCode !== 0).map((task) => task.package);
process.stdout.write(
  `node ${node}: ${tests.length} test tasks ran, none replayed from turbo's cache: ${passed} passed, ${failed} failed, ${skipped} skipped${crashed.length > 0 ? ` (failing tasks: ${crashed.join(", ")})` : ""}${silent.length > 0 ? ` (no vitest summary from ${silent.join(", ")})` : ""}\n`,
);
