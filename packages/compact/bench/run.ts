import { cpus } from "node:os";
import { measureLayers, measurePrepare } from "./prepare-speed.ts";
import { chainSessions, loadSessions, type PolicyTotals, policies, replayAll } from "./replay-corpus.ts";

/**
 * The compaction benchmark: `prepare()` per turn when nothing fires (beside LangChain's approximate count),
 * the cost of each layer when it fires, and every corpus session replayed at 16K and 32K through our ladder
 * and through two baselines re-implemented from the seed documents. Prints markdown for BENCHMARKS.md.
 */
const fmt = (value: number, digits = 3) => value.toFixed(digits);
const pct = (value: number) => `${(value * 100).toFixed(1)} %`;

console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}\n`);

console.log("### prepare() per turn when nothing fires\n");
console.log(
  "| context | messages | prepare median | prepare p95 | LangChain countTokensApproximately median | ratio (ours / LangChain) |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const tokens of [200_000, 1_000_000]) {
  const row = await measurePrepare(tokens);
  console.log(
    `| ${tokens.toLocaleString("en-US")} tokens | ${row.messages} | ${fmt(row.prepareMedianMs)} ms | ${fmt(row.prepareP95Ms)} ms | ${fmt(row.langChainMedianMs)} ms | ${fmt(row.prepareMedianMs / row.langChainMedianMs, 2)}× |`,
  );
}

console.log("\n### Each layer when it fires (200,000-token session)\n");
console.log("| layer | median | tokens freed |");
console.log("| --- | --- | --- |");
for (const row of await measureLayers())
  console.log(`| ${row.layer} | ${fmt(row.medianMs, 2)} ms | ${row.tokensFreed.toLocaleString("en-US")} |`);

const corpus = loadSessions();
const long = chainSessions(corpus);
for (const [label, sessions, window] of [
  ["every corpus session", corpus, 16_000],
  ["every corpus session", corpus, 32_000],
  ["long sessions (each source's sessions back to back)", long, 16_000],
  ["long sessions (each source's sessions back to back)", long, 32_000],
] as const) {
  console.log(
    `\n### Replay of ${label} at ${window.toLocaleString("en-US")} tokens (${sessions.length} sessions)\n`,
  );
  const results: [string, PolicyTotals][] = [];
  for (const policy of policies()) results.push([policy.name, await replayAll(sessions, policy, window)]);
  const baseAgent = results.find(([name]) => name.startsWith("baseline: BaseAgent"))![1];
  console.log(
    "| policy | calls | overflows | violations | peak | summaries | vs BaseAgent | prefix reuse | input cost | vs BaseAgent | wait at threshold |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const [name, totals] of results) {
    console.log(
      `| ${name} | ${totals.calls} | ${totals.overflows} | ${totals.violations} | ${totals.peakTokens.toLocaleString("en-US")} | ${totals.summarizerCalls} | ${fmt(totals.summarizerCalls / Math.max(1, baseAgent.summarizerCalls), 2)}× | ${pct(totals.prefixTokens / Math.max(1, totals.requestTokens))} | ${totals.inputCost.toLocaleString("en-US")} | ${fmt(totals.inputCost / Math.max(1, baseAgent.inputCost), 2)}× | ${totals.waitedMs} ms |`,
    );
  }
  const ours = results[0]![1];
  console.log(
    `\nLayers of "${results[0]![0]}" at ${window}: ${Object.entries(ours.layers)
      .map(
        ([layer, value]) =>
          `${layer} ${value.runs} runs / ${value.tokensFreed.toLocaleString("en-US")} freed`,
      )
      .join("; ")}.`,
  );
  console.log(`Sliding window (no compaction) input cost: ${ours.slidingWindowInputCost.toLocaleString("en-US")}.`);
}
