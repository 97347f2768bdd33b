// Writes src/__fixtures__/reference-counts.json: the token counts the estimator's accuracy test holds it to.
// Run `pnpm reference-counts` in packages/tokens after the corpus changes (the test says when). Stored are
// ids and counts only, never corpus text:
// - claudeUsage: output tokens a Claude API response reported for the text it wrote (api-fixtures);
// - openHandsRounds: prompt tokens an OpenHands run's next call grew by, against the round it added;
// - tokenizers: every ~1,200-character chunk of corpus/text and every session message of 200+ characters,
//   counted by the three public reference tokenizers the estimator's profiles are fitted to.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  claudeUsageSamples,
  openHandsRoundSamples,
  tokenizerSamples,
} from "../src/__fixtures__/reference-texts.ts";
import { loadReferenceTokenizers } from "./reference-tokenizers.ts";

const here = dirname(fileURLToPath(import.meta.url));
const tokenizers = loadReferenceTokenizers();
// Per corpus file: [index of the chunk or message, count of each tokenizer in `tokenizers` order].
const counts: Record<string, number[][]> = {};
for (const sample of tokenizerSamples()) {
  const rows = counts[sample.group] ?? [];
  rows.push([
    sample.index,
    ...tokenizers.map((tokenizer) => sample.parts.reduce((total, part) => total + tokenizer.count(part), 0)),
  ]);
  counts[sample.group] = rows;
}
const fixture = {
  generatedBy: "packages/tokens/bench/reference-counts.ts (pnpm reference-counts)",
  claudeUsage: claudeUsageSamples().map(({ id, model, tokens }) => ({ id, model, tokens })),
  openHandsRounds: openHandsRoundSamples().map(({ id, model, tokens }) => ({
    id,
    model,
    tokens,
  })),
  tokenizers: tokenizers.map((tokenizer) => tokenizer.name),
  tokenizerLabels: tokenizers.map((tokenizer) => tokenizer.label),
  counts,
};
const path = join(here, "../src/__fixtures__/reference-counts.json");
writeFileSync(path, JSON.stringify(fixture));
// In the repository's own JSON layout, so that a regenerated file differs only where a count changed.
execFileSync("npx", ["biome", "format", "--write", path], { stdio: "ignore" });
console.log(
  `wrote ${path}: ${fixture.claudeUsage.length} Claude usage samples, ${fixture.openHandsRounds.length} OpenHands rounds, ${Object.values(counts).flat().length} tokenizer samples`,
);
