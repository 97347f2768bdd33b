// The default policy's billed cost on the third-party corpus, per session, at 200K, 100K and 32K: the corpus
// sessions one by one and each source's sessions chained. `cost-baseline.json` holds the figures as they were
// last accepted, and the evaluation suite (`replay-cost.eval.test.ts`) fails when a session costs more than
// that. `npx tsx bench/cost-baseline.ts` writes the file again from this checkout: do it when a change lowers a
// cost (so that the lower figure holds from then on), or raises one on purpose (and say why in BENCHMARKS.md).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { policies } from "./policies.ts";
import { chainSessions, loadSessions, replayAll } from "./replay-corpus.ts";

export const COST_BASELINE_PATH = fileURLToPath(new URL("./cost-baseline.json", import.meta.url));

export const COST_WINDOWS = [200_000, 100_000, 32_000] as const;

/** `"32000"` → `"chained claude-code"` → dollars (the session's input cost, as the replay bills it). */
export type CostTable = Record<string, Record<string, number>>;

/** The default policy's cost of every corpus session and every chain, at each window. */
export async function replayCosts(): Promise<CostTable> {
  const corpus = loadSessions();
  const chained = chainSessions(corpus);
  const ours = policies()[0]!;
  const table: CostTable = {};
  for (const window of COST_WINDOWS) {
    const row: Record<string, number> = {};
    for (const [set, sessions] of [
      ["chained", chained],
      ["corpus", corpus],
    ] as const) {
      const totals = await replayAll(sessions, ours, window);
      for (const session of totals.perSession)
        row[`${set} ${session.name.split(" ")[0]}`] = Number(session.inputCostUsd.toFixed(6));
    }
    table[String(window)] = row;
  }
  return table;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = await replayCosts();
  writeFileSync(COST_BASELINE_PATH, `${JSON.stringify(table, null, 2)}\n`);
  const sessions = Object.values(table).reduce((sum, row) => sum + Object.keys(row).length, 0);
  console.log(`wrote ${COST_BASELINE_PATH}: ${sessions} costs over ${COST_WINDOWS.length} windows`);
}
