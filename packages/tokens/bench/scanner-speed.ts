// `pnpm bench:scanner` (tsx bench/scanner-speed.ts --tiktoken): throughput of the estimator alone on the
// concatenated corpus texts and, with --tiktoken, of js-tiktoken o200k on the same text, for profiling the hot
// loop (`node --cpu-prof --import tsx bench/scanner-speed.ts`). `pnpm bench` is the full benchmark.
import { getEncoding } from "js-tiktoken";
import { estimateTextTokens } from "../src/estimate-text-tokens.ts";
import { loadTextFiles } from "./corpus.ts";
import { throughput } from "./throughput.ts";

const text = loadTextFiles()
  .map((file) => file.text)
  .join("\n");
const bytes = Buffer.byteLength(text, "utf8");
const ours = throughput(() => estimateTextTokens(text), bytes, 2_000);
console.log(
  `ours ${ours.toFixed(1)} MB/s (${(bytes / 1e6).toFixed(2)} MB, ${estimateTextTokens(text)} tokens)`,
);
if (process.argv.includes("--tiktoken")) {
  const o200k = getEncoding("o200k_base");
  const tiktoken = throughput(() => o200k.encode(text, "all"), bytes, 3_000);
  console.log(`js-tiktoken ${tiktoken.toFixed(2)} MB/s, ratio ${(ours / tiktoken).toFixed(0)}×`);
}
