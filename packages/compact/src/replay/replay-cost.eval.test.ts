import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COST_BASELINE_PATH, COST_WINDOWS, type CostTable, replayCosts } from "../../bench/cost-baseline.ts";

// Cost must not rise: the default policy's billed cost of every corpus session (one by one, and each source's
// sessions chained), at each window, stays at or under the figure last accepted in bench/cost-baseline.json.
// A change that lowers one writes the file again (`npx tsx bench/cost-baseline.ts`); one that raises one on
// purpose does too, and says why in BENCHMARKS.md.

const baseline = JSON.parse(readFileSync(COST_BASELINE_PATH, "utf8")) as CostTable;
const costs = await replayCosts();

describe.each(COST_WINDOWS.map(String))("the replay's cost at %s tokens", (window) => {
  it("is at or under the accepted figure for every session, and every session has one", () => {
    const now = costs[window]!;
    const accepted = baseline[window] ?? {};
    expect(Object.keys(now).sort(), "the sessions replayed are the ones the baseline names").toEqual(
      Object.keys(accepted).sort(),
    );
    const rises = Object.entries(now).flatMap(([session, cost]) => {
      const before = accepted[session]!;
      // Half a millionth of a dollar: the figures are rounded to the millionth when written.
      return cost > before + 0.0000005
        ? [`${session}: $${before} → $${cost} (+${(((cost - before) / before) * 100).toFixed(2)} %)`]
        : [];
    });
    expect(rises, "sessions that cost more than bench/cost-baseline.json accepts").toEqual([]);
  });
});
