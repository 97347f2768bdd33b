// Fits the estimator's coefficients against the reference tokenizers and rewrites
// src/estimator-coefficients.ts. Refit with `pnpm fit` (tsx bench/fit.ts) after changing the features in
// src/text-features.ts or when the corpus grows.
//
// Method: every corpus text is cut at line boundaries into chunks of ~300, ~1,200 and ~4,000 characters, and
// every text part of every corpus session message (text, tool name, tool input JSON, tool result) of at
// least 40 characters is a sample. For each reference tokenizer, non-negative least squares on relative error
// (rows weighted by 1/reference count) gives the coefficients; they are then scaled up so that at most
// UNDER_ESTIMATE_SHARE of the samples are under-estimated, because the estimator is used pre-flight.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { collectTextFeatures, TEXT_FEATURE_COUNT, TEXT_FEATURE_NAMES } from "../src/text-features.ts";
import { chunkText, loadSessions, loadTextFiles } from "./corpus.ts";
import { messageParts } from "./message-parts.ts";
import { loadReferenceTokenizers, type ReferenceTokenizer } from "./reference-tokenizers.ts";

const UNDER_ESTIMATE_SHARE = 0.35;
const here = dirname(fileURLToPath(import.meta.url));

interface Sample {
  kind: string;
  features: Float64Array;
  counts: number[];
}

export function collectSamples(tokenizers: ReferenceTokenizer[]): Sample[] {
  const texts: { kind: string; text: string }[] = [];
  for (const file of loadTextFiles()) {
    for (const size of [300, 1_200, 4_000]) {
      for (const chunk of chunkText(file.text, size)) texts.push({ kind: file.kind, text: chunk });
    }
  }
  for (const session of loadSessions()) {
    for (const message of session.messages) {
      for (const part of messageParts(message))
        if (part.length >= 40) texts.push({ kind: "session", text: part });
    }
  }
  return texts
    .filter((sample) => sample.text.trim().length > 0)
    .map(({ kind, text }) => {
      const features = new Float64Array(TEXT_FEATURE_COUNT);
      collectTextFeatures(text, features);
      return { kind, features, counts: tokenizers.map((tokenizer) => tokenizer.count(text)) };
    })
    .filter((sample) => sample.counts.every((count) => count > 0));
}

/** Non-negative weighted least squares by projected coordinate descent on the normal equations. */
function fitNonNegative(samples: Sample[], target: number): number[] {
  const size = TEXT_FEATURE_COUNT;
  const gram = new Float64Array(size * size);
  const moment = new Float64Array(size);
  for (const sample of samples) {
    const y = sample.counts[target]!;
    const weight = 1 / (y * y);
    for (let i = 0; i < size; i++) {
      const xi = sample.features[i]!;
      if (xi === 0) continue;
      moment[i]! += weight * xi * y;
      for (let j = 0; j < size; j++) gram[i * size + j]! += weight * xi * sample.features[j]!;
    }
  }
  const coefficients = new Array<number>(size).fill(0.25);
  for (let sweep = 0; sweep < 20_000; sweep++) {
    let change = 0;
    for (let i = 0; i < size; i++) {
      const diagonal = gram[i * size + i]!;
      if (diagonal === 0) continue;
      let residual = moment[i]!;
      for (let j = 0; j < size; j++) if (j !== i) residual -= gram[i * size + j]! * coefficients[j]!;
      const next = Math.max(0, residual / diagonal);
      change = Math.max(change, Math.abs(next - coefficients[i]!));
      coefficients[i] = next;
    }
    if (change < 1e-10) break;
  }
  return coefficients;
}

function predict(coefficients: readonly number[], features: Float64Array): number {
  let total = 0;
  for (let i = 0; i < TEXT_FEATURE_COUNT; i++) total += coefficients[i]! * features[i]!;
  return total;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function main(): void {
  const tokenizers = loadReferenceTokenizers();
  const samples = collectSamples(tokenizers);
  console.log(`${samples.length} samples`);
  const fitted: Record<string, number[]> = {};
  for (const [target, tokenizer] of tokenizers.entries()) {
    const raw = fitNonNegative(samples, target);
    // Scale so that only UNDER_ESTIMATE_SHARE of the samples are below their reference count.
    const ratios = samples.map((sample) => sample.counts[target]! / predict(raw, sample.features));
    const scale = quantile(ratios, 1 - UNDER_ESTIMATE_SHARE);
    const coefficients = raw.map((value) => value * scale);
    fitted[tokenizer.name] = coefficients;
    const errors = samples.map((sample) => {
      const reference = sample.counts[target]!;
      return Math.abs(predict(coefficients, sample.features) - reference) / reference;
    });
    console.log(
      `${tokenizer.name}: scale ${scale.toFixed(4)}, in-sample |error| p50 ${(quantile(errors, 0.5) * 100).toFixed(1)}% p95 ${(quantile(errors, 0.95) * 100).toFixed(1)}%`,
    );
    const kinds = [...new Set(samples.map((sample) => sample.kind))];
    for (const kind of kinds) {
      const subset = samples.filter((sample) => sample.kind === kind);
      const kindErrors = subset.map(
        (sample) =>
          (predict(coefficients, sample.features) - sample.counts[target]!) / sample.counts[target]!,
      );
      console.log(
        `  ${kind} (${subset.length}): p5 ${(quantile(kindErrors, 0.05) * 100).toFixed(1)}% p50 ${(quantile(kindErrors, 0.5) * 100).toFixed(1)}% p95 ${(quantile(kindErrors, 0.95) * 100).toFixed(1)}%`,
      );
    }
    console.log(
      TEXT_FEATURE_NAMES.map((name, index) => `  ${name}: ${coefficients[index]!.toFixed(4)}`).join("\n"),
    );
  }
  const format = (values: number[]) => `[${values.map((value) => Number(value.toPrecision(5))).join(", ")}]`;
  const source = `// Generated by bench/fit.ts (\`pnpm fit\`): do not edit by hand.
//
// Each array holds one weight per feature of TEXT_FEATURE_NAMES (src/text-features.ts), in that order; the
// estimate of a text is the dot product of its feature counts with the weights. The weights were fitted by
// non-negative least squares on relative error against one reference tokenizer each ("claude":
// @anthropic-ai/tokenizer 0.0.4, the legacy public Claude tokenizer; "o200k" and "cl100k": js-tiktoken 1.0.21),
// over ${samples.length} samples: the texts of ../shared/corpus/text cut into ~300, ~1,200 and ~4,000-character
// chunks, and the text parts of the corpus sessions' messages. Each set was then scaled up so that only
// ${UNDER_ESTIMATE_SHARE * 100}% of the samples are under-estimated (the estimator is used pre-flight).
// To refit: change the corpus or the features, run \`pnpm fit\` in packages/tokens, rerun the tests and \`pnpm bench\`.

export type EstimatorProfile = "claude" | "o200k" | "cl100k";

export const ESTIMATOR_COEFFICIENTS: Readonly<Record<EstimatorProfile, readonly number[]>> = Object.freeze({
  claude: Object.freeze(${format(fitted.claude!)}),
  o200k: Object.freeze(${format(fitted.o200k!)}),
  cl100k: Object.freeze(${format(fitted.cl100k!)}),
});
`;
  if (process.argv.includes("--write")) {
    writeFileSync(join(here, "../src/estimator-coefficients.ts"), source);
    console.log("wrote src/estimator-coefficients.ts");
  }
}

main();
