// Fails when code, comments or docs cite the design sources that sit beside the repository (`../shared/seeds`,
// `../shared/reference`, "seed 002", "providers-wire.md"): users do not have them. A constant states its reason
// in words or cites a public source (vendor docs, papers, Claude Code's public behaviour). Scans the tracked
// .ts/.tsx/.mts/.js/.mjs/.md/.json files. Run from the repository root (`pnpm run check` does). Prints one line.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CITATION =
  /shared\/(?:seeds|reference)\b|\bseeds? 0\d\d\b|\(seeds? [0-9, ]+\)|\b(?:providers|hooks)-wire\.md\b|\bseed (?:documents?|constants?)\b/i;
const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
  .split("\0")
  .filter(
    (file) =>
      /\.(?:ts|tsx|mts|cts|js|mjs|cjs|md|json)$/.test(file) && !file.startsWith(".ci/check-citations"),
  );
const found = [];
for (const file of files) {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  lines.forEach((line, index) => {
    if (CITATION.test(line)) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 120)}`);
  });
}
if (found.length > 0) {
  process.stderr.write(
    `${found.length} lines cite sources users do not have (../shared, seed documents); state the reason in words or cite a public source:\n${found.join("\n")}\n`,
  );
  process.exit(1);
}
process.stdout.write(`citations: ${files.length} files, none cites ../shared or a seed document\n`);
