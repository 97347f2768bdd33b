// `pnpm bench`: a 10,000-file memory dir. Measures a cold index load plus the retrieval pre-filter (a new
// store instance per query: MEMORY.md, the catalog and BM25 over it) against the naive baseline of reading
// every file and grepping it for the query words, in the same run. Prints a Markdown section for
// BENCHMARKS.md. Not part of `test`.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { corpusDir } from "@unforget/testing/corpus";
import { createMemoryDir } from "../src/dir/memory-dir.ts";
import { formatMemoryFile, MEMORY_TYPES } from "../src/store/memory-frontmatter.ts";

const FILES = 10_000;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 40);
const TARGET_MS = 50;

let seed = 7;
const random = () => {
  seed = (seed * 16_807) % 2_147_483_647;
  return seed / 2_147_483_647;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

async function corpusLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const folder of ["code", "email", "logs", "json"]) {
    const base = join(corpusDir(), "text", folder);
    for (const file of await readdir(base).catch(() => [])) {
      const text = await readFile(join(base, file), "utf8").catch(() => "");
      for (const line of text.split("\n")) {
        const words = line.match(/[A-Za-z][A-Za-z0-9_-]{2,}/g) ?? [];
        if (words.length >= 6 && words.length <= 24) lines.push(words.join(" "));
      }
    }
  }
  return lines;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function naiveSearch(root: string, query: string): Promise<string[]> {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  const scored: Array<[string, number]> = [];
  const visit = async (folder: string, prefix: string) => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      if (entry.isDirectory()) await visit(join(folder, entry.name), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith(".md") && entry.name !== "MEMORY.md") {
        const text = (await readFile(join(folder, entry.name), "utf8")).toLowerCase();
        const hits = terms.reduce((sum, term) => sum + (text.includes(term) ? 1 : 0), 0);
        if (hits > 0) scored.push([`${prefix}${entry.name}`, hits]);
      }
    }
  };
  await visit(root, "");
  return scored
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(([name]) => name);
}

async function main(): Promise<void> {
  const lines = await corpusLines();
  if (lines.length < 100)
    throw new Error(`The corpus at ${corpusDir()} has too little text for the benchmark.`);
  const parent = await mkdtemp(join(tmpdir(), "memory-bench-"));
  const root = join(parent, "memory");
  try {
    await mkdir(join(root, "topics"), { recursive: true });
    const now = Date.now();
    for (let index = 0; index < FILES; index++) {
      const description = pick(lines);
      const words = description.split(" ");
      const name = `${words.slice(0, 3).join("_").toLowerCase()}_${index}`;
      const body = `${pick(lines)}\n\n${pick(lines)}\n${pick(lines)}\n`;
      const folder = index % 4 === 0 ? "topics/" : "";
      await writeFile(
        join(root, `${folder}${name}.md`),
        formatMemoryFile(
          {
            name,
            description,
            type: pick(MEMORY_TYPES),
            updated: new Date(now - Math.floor(random() * 400) * 86_400_000).toISOString(),
            ...(index % 10 === 0 ? { decay: false } : {}),
          },
          body,
        ),
      );
    }
    // One full scan builds the catalog and MEMORY.md, as the first `list()` of a dir written by hand does.
    const buildStart = performance.now();
    const built = await createMemoryDir({ root });
    const entries = await built.list();
    const buildMs = performance.now() - buildStart;
    const queries = Array.from({ length: QUERIES }, () => {
      const words = pick(lines).split(" ");
      return words.slice(0, 4 + Math.floor(random() * 4)).join(" ");
    });

    const ours: number[] = [];
    const baseline: number[] = [];
    let indexLines = 0;
    let candidates = 0;
    let overlap = 0;
    for (const query of queries) {
      const start = performance.now();
      const dir = await createMemoryDir({ root });
      const index = await dir.loadIndex();
      const ranked = await dir.search(query, { limit: 20 });
      ours.push(performance.now() - start);
      indexLines = index.text.split("\n").length;
      candidates += ranked.length;

      const naiveStart = performance.now();
      const naive = await naiveSearch(root, query);
      baseline.push(performance.now() - naiveStart);
      overlap += ranked.filter((scored) => naive.includes(scored.entry.name)).length;
    }
    const median = percentile(ours, 50);
    const naiveMedian = percentile(baseline, 50);
    const report = [
      "## @unforget/memory",
      "",
      `Run: \`cd packages/memory && npx pnpm@10.34.9 bench\` (\`tsx bench/memory-dir.bench.ts\`). Machine: \`nproc\` ${cpus().length}, ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}, shared with other jobs: absolute times vary between runs; the ratio compares numbers from the same run.`,
      "",
      `A memory dir of ${FILES.toLocaleString("en-US")} topic files (a quarter in a subfolder; descriptions and bodies are lines of the corpus text, so the vocabulary is real), ${entries.length.toLocaleString("en-US")} listed. ${QUERIES} queries of 4 to 7 corpus words. Each "ours" run opens a new store instance (no in-memory cache), loads MEMORY.md (cut to ${indexLines} lines) and runs the BM25 pre-filter over the catalog file (\`dir.search\`). The baseline reads every file and greps it for the query words, ranking by words found. OS file cache warm for both.`,
      "",
      "| | median | p95 | max |",
      "| --- | --- | --- | --- |",
      `| ours: index load + BM25 pre-filter | ${median.toFixed(1)} ms | ${percentile(ours, 95).toFixed(1)} ms | ${Math.max(...ours).toFixed(1)} ms |`,
      `| baseline: read every file + grep | ${naiveMedian.toFixed(1)} ms | ${percentile(baseline, 95).toFixed(1)} ms | ${Math.max(...baseline).toFixed(1)} ms |`,
      "",
      `- Target: under ${TARGET_MS} ms together — **${median < TARGET_MS ? "met" : "not met"}** at the median (p95 ${percentile(ours, 95) < TARGET_MS ? "met" : "not met"}).`,
      `- Ratio: the baseline takes **${(naiveMedian / median).toFixed(1)}×** as long (medians).`,
      `- First scan of the hand-written dir (reading all ${FILES.toLocaleString("en-US")} files, writing the catalog and MEMORY.md): ${(buildMs / 1000).toFixed(2)} s, once.`,
      `- Agreement: ${((overlap / Math.max(1, candidates)) * 100).toFixed(0)} % of our top-20 candidates are also in the grep baseline's top 20 (grep counts words anywhere in the file, we rank name, description, type and headings with BM25 and decay).`,
      "",
    ].join("\n");
    console.log(report);
  } finally {
    if (process.env.KEEP_BENCH_DIR) console.error(`kept ${root}`);
    else await rm(parent, { recursive: true, force: true });
  }
}

await main();
