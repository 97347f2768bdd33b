// Fails when code, comments or docs cite what users do not have: the design sources that sit beside the
// repository (`../shared/seeds`, `../shared/reference`, "seed 002", "providers-wire.md"), or a number of the
// project's own tracker ("issue 27", "Issue #30"). A constant states its reason in words or cites a public source
// (vendor docs, papers, Claude Code's public behaviour); a change names the behaviour or its decision record
// (docs/decisions/NNNN-*.md). A public tracker is cited by its address (github.com/owner/repo/issues/304).
// Scans the tracked .ts/.tsx/.mts/.js/.mjs/.md/.json files. Run from the repository root (`pnpm run check` does).
// Prints one line.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const RULES = [
  {
    pattern:
      /shared\/(?:seeds|reference)\b|\bseeds? 0\d\d\b|\(seeds? [0-9, ]+\)|\b(?:providers|hooks)-wire\.md\b|\bseed (?:documents?|constants?)\b/i,
    says: "cite sources users do not have (../shared, seed documents); state the reason in words or cite a public source",
  },
  {
    pattern: /\bissues?[\s-]+#?\d+/i,
    says: "cite the project's tracker by number, which users do not have; name the behaviour or the decision record (docs/decisions/NNNN-*.md), or a public tracker by its address",
  },
];
const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
  .split("\0")
  .filter(
    (file) =>
      /\.(?:ts|tsx|mts|cts|js|mjs|cjs|md|json)$/.test(file) && !file.startsWith(".ci/check-citations"),
  );
const found = RULES.map(() => []);
for (const file of files) {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  lines.forEach((line, index) => {
    RULES.forEach((rule, at) => {
      if (rule.pattern.test(line)) found[at].push(`${file}:${index + 1}: ${line.trim().slice(0, 120)}`);
    });
  });
}
if (found.some((lines) => lines.length > 0)) {
  RULES.forEach((rule, at) => {
    if (found[at].length > 0)
      process.stderr.write(`${found[at].length} lines ${rule.says}:\n${found[at].join("\n")}\n`);
  });
  process.exit(1);
}
process.stdout.write(
  `citations: ${files.length} files, none cites ../shared, a seed document or a tracker number\n`,
);
