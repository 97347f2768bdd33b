import { median, runBackground } from "./background-summaries.ts";
import { chainSessions, loadSessions, repeatSession } from "./replay-corpus.ts";

async function main() {
  const long = chainSessions(loadSessions());
  const marathon = long.filter((s) => s.name.startsWith("sweagent")).map((s) => repeatSession(s, 6));
  for (const [sessions, window] of [
    [long, 16_000],
    [long, 32_000],
    [marathon, 200_000],
  ] as const) {
    for (const earlyMark of [undefined, false] as const) {
      const t = performance.now();
      const run = await runBackground(sessions, {
        window,
        callMs: 40,
        summaryMs: 200,
        config: earlyMark === false ? { earlyMark: false } : {},
      });
      console.log(
        window,
        earlyMark,
        JSON.stringify({ ...run, waits: undefined, foregroundMs: undefined }),
        "median wait",
        median(run.waits).toFixed(1),
        "median fg",
        median(run.foregroundMs).toFixed(1),
        "s",
        ((performance.now() - t) / 1000).toFixed(1),
      );
    }
  }
}
void main();
