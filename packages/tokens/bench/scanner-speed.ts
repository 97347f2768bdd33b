// `tsx bench/scanner-speed.ts`: quick throughput of the feature scanner alone on the concatenated corpus texts
// (and, with --tiktoken, js-tiktoken o200k on the same text), for profiling the hot loop.
import { getEncoding } from "js-tiktoken";
import { estimateTextTokens } from "../src/estimate-text-tokens.ts";
import { loadTextFiles } from "./corpus.ts";

const text = loadTextFiles()
  .map((file) => file.text)
  .join("\n");
const bytes = Buffer.byteLength(text, "utf8");
function rate(run: () => void, milliseconds: number): number {
  run();
  const rates: number[] = [];
  const deadline = performance.now() + milliseconds;
  do {
    const start = performance.now();
    run();
    rates.push(bytes / 1e6 / ((performance.now() - start) / 1_000));
  } while (performance.now() < deadline || rates.length < 3);
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)]!;
}
const ours = rate(() => estimateTextTokens(text), 2_000);
console.log(
  `ours ${ours.toFixed(1)} MB/s (${(bytes / 1e6).toFixed(2)} MB, ${estimateTextTokens(text)} tokens)`,
);
if (process.argv.includes("--tiktoken")) {
  const o200k = getEncoding("o200k_base");
  const tiktoken = rate(() => o200k.encode(text, "all"), 3_000);
  console.log(`js-tiktoken ${tiktoken.toFixed(2)} MB/s, ratio ${(ours / tiktoken).toFixed(0)}×`);
}
