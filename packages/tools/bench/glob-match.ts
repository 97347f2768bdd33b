// Glob matching: picomatch's backtracking expressions against our linear-time matcher (re2js), in the same run.
// Usage: tsx bench/glob-match.ts. Prints a Markdown table: typical patterns over 100 000 paths, then star-heavy
// patterns against one name of `a`s (picomatch's time grows as a power of the name's length; it is measured on
// short names and on the 250-character one only where it ends within a minute).
import picomatch from "picomatch";
import { compileGlob } from "../src/search/glob-pattern.ts";

const PATHS = Array.from(
  { length: 100_000 },
  (_, index) => `packages/pkg${index % 50}/src/dir${index % 7}/file-${index}.${index % 3 ? "ts" : "js"}`,
);

function timed(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

function format(ms: number): string {
  return ms >= 1_000 ? `${(ms / 1_000).toFixed(1)} s` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
}

console.log("| pattern | paths | picomatch | ours (re2js) | ratio |\n| --- | --- | --- | --- | --- |");
for (const pattern of ["**/*.{ts,tsx}", "packages/*/src/**/*.test.ts", "**/dir3/*"]) {
  const theirs = picomatch(pattern, { dot: true });
  const ours = compileGlob(pattern);
  // Warm-up, then the measured pass.
  for (const path of PATHS.slice(0, 5_000)) theirs(path) && ours(path);
  const count = (matches: (path: string) => boolean) => PATHS.filter((path) => matches(path)).length;
  const theirsMs = timed(() => count(theirs));
  const oursMs = timed(() => count(ours));
  if (count(theirs) !== count(ours)) throw new Error(`${pattern}: the matchers disagree`);
  console.log(
    `| \`${pattern}\` | 100 000 | ${format(theirsMs)} | ${format(oursMs)} | ${(oursMs / theirsMs).toFixed(1)}× |`,
  );
}

console.log("\n| pattern | name | picomatch | ours (re2js) |\n| --- | --- | --- | --- |");
for (const [pattern, lengths] of [
  ["d/*a*a*a*a*b", [50, 100, 150, 250]],
  ["d/*a*a*a*a*a*a*b", [30, 50, 70]],
] as const) {
  const theirs = picomatch(pattern, { dot: true });
  const ours = compileGlob(pattern);
  for (const length of lengths) {
    const name = `d/${"a".repeat(length)}`;
    console.log(
      `| \`${pattern}\` | ${length} × a | ${format(timed(() => theirs(name)))} | ${format(timed(() => ours(name)))} |`,
    );
  }
  const long = `d/${"a".repeat(250)}`;
  if (!lengths.includes(250 as never)) {
    console.log(`| \`${pattern}\` | 250 × a | (not run: hours) | ${format(timed(() => ours(long)))} |`);
  }
}
