// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal text ${VAR} is the shell syntax measured.
// The Bash gate's answer per command, as `authorize` pays it: the analysis (parse, walk, wrappers, bash's state
// changes) on commands from a few bytes to 40 kB, built from the shell forms the gate reads. Prints the median and
// p99 per size, after 500 warm-up calls (so that the p99 is the gate's, not the compiler's), in wall-clock time and
// in CPU time (the process's, which a busy machine disturbs less). Nothing is cached between calls: each call parses
// and walks its command anew, so measuring one command many times is measuring it cold every time.
// Run: `cd packages/session && npx tsx bench/bash-gate.ts`. With `BASELINE=<another checkout>/packages/session`,
// that checkout's gate is measured in the same run, alternating with this one size by size (`ROUNDS`, default 2),
// and the ratio of the medians is printed: on a shared machine only figures from the same run compare.
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type ShellAnalyzer, shellAnalyzer } from "../src/permissions/shell/shell-analyzer.ts";

const PIECES = [
  "ls -la | grep x",
  "read -r line <<< hi; echo $line",
  "printf -v out %s hi",
  "for f in a b; do echo $f; done",
  "declare -i n=1; export FOO=$(ls)",
  "f() { local x=$1; echo $x; }; f a",
  "bash -c 'ls && echo hi'",
  "cat <<'EOF'\n$(rm x)\nEOF",
  "timeout 5 nice env X=1 npm test",
  ": ${PATH:=.}; (( n = 1 )); echo $((n + 1))",
];
const SIZES = [100, 1_000, 10_000, 20_000, 40_000];
const command = (bytes: number) => {
  let text = "";
  for (let index = 0; text.length < bytes; index++) text += `${PIECES[index % PIECES.length]}\n`;
  return text;
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const ms = (value: number) => `${value.toFixed(3)} ms`;

interface Figures {
  median: number;
  p99: number;
  cpuMedian: number;
  cpuP99: number;
}

function measure(analyze: ShellAnalyzer, text: string): Figures {
  for (let warm = 0; warm < 500; warm++) analyze(text, { homeDir: "/home/u" });
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < 1_000; run++) {
    const usage = process.cpuUsage();
    const started = performance.now();
    analyze(text, { homeDir: "/home/u" });
    wall.push(performance.now() - started);
    const used = process.cpuUsage(usage);
    cpu.push((used.user + used.system) / 1_000);
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return {
    median: percentile(wall, 0.5),
    p99: percentile(wall, 0.99),
    cpuMedian: percentile(cpu, 0.5),
    cpuP99: percentile(cpu, 0.99),
  };
}

const gates: [name: string, analyze: ShellAnalyzer][] = [["this checkout", await shellAnalyzer()]];
const baseline = process.env.BASELINE;
if (baseline !== undefined) {
  const module = resolve(baseline, "src/permissions/shell/shell-analyzer.ts");
  const loaded = (await import(pathToFileURL(module).href)) as {
    shellAnalyzer: () => Promise<ShellAnalyzer>;
  };
  gates.unshift([`baseline (${baseline})`, await loaded.shellAnalyzer()]);
}
const rounds = baseline === undefined ? 1 : Number(process.env.ROUNDS ?? 2);

console.log(`load average at the start ${loadavg()[0]?.toFixed(1)}`);
console.log(
  "| gate | round | command size | median | p99 | CPU median | CPU p99 | load |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
);
const medians = new Map<string, number[]>();
for (let round = 1; round <= rounds; round++)
  for (const bytes of SIZES) {
    const text = command(bytes);
    // A gate that reads the command differently (a checkout without its dependencies reads nothing, and answers
    // at once) does other work: its figures would compare nothing.
    const readings = new Set(
      gates.map(([, analyze]) => JSON.stringify(analyze(text, { homeDir: "/home/u" }))),
    );
    if (readings.size > 1)
      throw new Error(
        `The gates read the ${text.length}-byte command differently; is the baseline installed and built? Nothing was compared.`,
      );
    for (const [name, analyze] of gates) {
      const figures = measure(analyze, text);
      const key = `${name} ${text.length}`;
      medians.set(key, [...(medians.get(key) ?? []), figures.cpuMedian]);
      console.log(
        `| ${name} | ${round} | ${text.length} B | ${ms(figures.median)} | ${ms(figures.p99)} | ${ms(figures.cpuMedian)} | ${ms(figures.cpuP99)} | ${loadavg()[0]?.toFixed(1)} |`,
      );
    }
  }
if (baseline !== undefined) {
  const [before, after] = gates.map(([name]) => name);
  for (const bytes of SIZES) {
    const size = command(bytes).length;
    const sum = (key: string) => (medians.get(key) ?? []).reduce((total, value) => total + value, 0);
    const ratio = sum(`${before} ${size}`) / sum(`${after} ${size}`);
    console.log(
      `${size} B: baseline / this checkout, CPU medians summed over the rounds: ${ratio.toFixed(2)}×`,
    );
  }
}
