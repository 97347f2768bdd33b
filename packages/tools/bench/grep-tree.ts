// Grep over a generated source tree against GNU `grep -r` on the same files, in the same run.
// Usage: tsx bench/grep-tree.ts [files] (default 20 000 files of ~4 KB in 200 folders). Prints a Markdown table.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolContext } from "@unforget/core";
import { createGrepTool } from "../src/index.ts";

const FILES = Number(process.argv[2] ?? 20_000);
const ROUNDS = 5;
const FOLDERS = 200;

/** A deterministic pseudo-random source, so every run searches the same tree. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const WORDS = [
  "value",
  "result",
  "config",
  "handler",
  "request",
  "buffer",
  "index",
  "count",
  "state",
  "token",
];

function sourceFile(next: () => number, withNeedle: boolean): string {
  const lines: string[] = [];
  for (let fn = 0; fn < 12; fn++) {
    const name = `${WORDS[Math.floor(next() * WORDS.length)]}${Math.floor(next() * 1000)}`;
    lines.push(`export function ${name}(input: number): number {`);
    for (let line = 0; line < 6; line++) {
      const word = WORDS[Math.floor(next() * WORDS.length)];
      lines.push(`  const ${word}${line} = input * ${Math.floor(next() * 100)} + ${line}; // ${word} step`);
    }
    lines.push("  return input;", "}", "");
  }
  if (withNeedle) lines.splice(Math.floor(next() * lines.length), 0, "// needleToken42: the rare one");
  return lines.join("\n");
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed(run: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

const root = await mkdtemp(join(tmpdir(), "unforget-grep-bench-"));
try {
  const next = random(42);
  let bytes = 0;
  for (let folder = 0; folder < FOLDERS; folder++) {
    await mkdir(join(root, `pkg${folder}`, "src"), { recursive: true });
  }
  for (let file = 0; file < FILES; file++) {
    const text = sourceFile(next, file % 100 === 7);
    bytes += Buffer.byteLength(text);
    await writeFile(join(root, `pkg${file % FOLDERS}`, "src", `file${file}.ts`), text);
  }
  const small = join(root, "pkg0");
  const grep = createGrepTool({ maxFiles: 1_000_000 });
  const context = (cwd: string): ToolContext => ({
    signal: new AbortController().signal,
    sessionId: "bench",
    toolUseId: "bench",
    cwd,
    sessionState: new Map(),
  });
  const ours = (cwd: string, input: Record<string, unknown>) => () => grep.execute(input, context(cwd));
  const gnu = (cwd: string, args: string[]) => () => {
    const result = spawnSync("grep", [...args, "."], { cwd, maxBuffer: 1024 * 1024 * 1024 });
    if (result.status !== 0 && result.status !== 1) throw new Error(String(result.stderr));
  };
  const cases: { name: string; cwd: string; ours: () => unknown; gnu: () => unknown }[] = [
    {
      name: "rare literal, files with matches (`grep -rl`)",
      cwd: root,
      ours: ours(root, { pattern: "needleToken42" }),
      gnu: gnu(root, ["-rl", "needleToken42"]),
    },
    {
      name: "rare literal, content (`grep -rn`)",
      cwd: root,
      ours: ours(root, { pattern: "needleToken42", output_mode: "content" }),
      gnu: gnu(root, ["-rn", "needleToken42"]),
    },
    {
      name: "regex on every file, files with matches (`grep -rlE`)",
      cwd: root,
      ours: ours(root, { pattern: "handler\\d+\\(input" }),
      gnu: gnu(root, ["-rlE", "handler[0-9]+\\(input"]),
    },
    {
      name: "common word, count per file (`grep -rc`)",
      cwd: root,
      ours: ours(root, { pattern: "return", output_mode: "count" }),
      gnu: gnu(root, ["-rc", "return"]),
    },
    {
      name: `small tree (${FILES / FOLDERS} files), content (\`grep -rn\`)`,
      cwd: small,
      ours: ours(small, { pattern: "needleToken42", output_mode: "content" }),
      gnu: gnu(small, ["-rn", "needleToken42"]),
    },
  ];
  // Warm the page cache and both code paths.
  for (const each of cases) {
    await each.ours();
    await each.gnu();
  }
  const rows: string[] = [];
  for (const each of cases) {
    const ourTimes: number[] = [];
    const gnuTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ourTimes.push(await timed(each.ours));
      gnuTimes.push(await timed(each.gnu));
    }
    const ourMedian = median(ourTimes);
    const gnuMedian = median(gnuTimes);
    rows.push(
      `| ${each.name} | ${ourMedian.toFixed(0)} ms | ${gnuMedian.toFixed(0)} ms | ${(ourMedian / gnuMedian).toFixed(1)}× |`,
    );
  }
  const grepVersion = execFileSync("grep", ["--version"], { encoding: "utf8" }).split("\n")[0];
  console.log(
    `Tree: ${FILES} files in ${FOLDERS} folders, ${(bytes / 1024 / 1024).toFixed(1)} MiB, in the page cache. ` +
      `Machine: nproc ${cpus().length}, ${cpus()[0]?.model ?? "?"}, Node ${process.version}, ${grepVersion}, ` +
      `load average ${loadavg()[0]?.toFixed(1)} at the end. Medians of ${ROUNDS} alternating runs.\n`,
  );
  console.log("| search | Grep tool | grep -r | ratio |\n| --- | --- | --- | --- |");
  console.log(rows.join("\n"));
} finally {
  await rm(root, { recursive: true, force: true });
}
