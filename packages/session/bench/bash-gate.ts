// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal text ${VAR} is the shell syntax measured.
// The Bash gate's answer per command, as `authorize` pays it: the analysis (parse, walk, wrappers, bash's state
// changes) on commands from a few bytes to 10 kB, built from the shell forms the gate reads. Prints the median and
// p99 per size, after 500 warm-up calls (so that the p99 is the gate's, not the compiler's). Run: `cd packages/session && npx tsx bench/bash-gate.ts`.
import { loadavg } from "node:os";
import { shellAnalyzer } from "../src/permissions/shell/shell-analyzer.ts";

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
const analyze = await shellAnalyzer();
const command = (bytes: number) => {
  let text = "";
  for (let index = 0; text.length < bytes; index++) text += `${PIECES[index % PIECES.length]}\n`;
  return text;
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
console.log(`load average ${loadavg()[0]?.toFixed(1)}`);
console.log("| command size | median | p99 |\n| ---: | ---: | ---: |");
for (const bytes of [100, 1_000, 10_000]) {
  const text = command(bytes);
  for (let warm = 0; warm < 500; warm++) analyze(text, { homeDir: "/home/u" });
  const times: number[] = [];
  for (let run = 0; run < 1_000; run++) {
    const started = performance.now();
    analyze(text, { homeDir: "/home/u" });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(
    `| ${text.length} B | ${percentile(times, 0.5).toFixed(3)} ms | ${percentile(times, 0.99).toFixed(3)} ms |`,
  );
}
