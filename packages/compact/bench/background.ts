import { cpus } from "node:os";
import { median, runBackground } from "./background-summaries.ts";
import { chainSessions, loadSessions, repeatSession } from "./replay-corpus.ts";

/**
 * Background summaries on a real clock (`pnpm bench:background`): the long sessions at 16K, 24K, 32K and 48K, and the
 * SWE-agent sessions played six times back to back at 200K (the only ones long enough to cross a 200K
 * threshold), each with the default early mark and with summaries in the foreground only (the same-run
 * baseline). A model call takes 40 ms and a summary 200 ms of real time (a summary is five calls long).
 * Prints markdown for BENCHMARKS.md.
 */
const CALL_MS = 40;
const SUMMARY_MS = 200;

async function main(): Promise<void> {
  console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}\n`);
  const long = chainSessions(loadSessions());
  const marathon = long
    .filter((session) => session.name.startsWith("sweagent"))
    .map((session) => repeatSession(session, 6));
  const total = { started: 0, applied: 0, resolved: 0, waits: [] as number[], foregroundMs: [] as number[] };
  console.log(
    "| sessions | window | summaries | started in the background | applied | discarded | unused (session ended first) | median wait at the threshold | median foreground summary | wait / foreground |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const [label, sessions, window] of [
    ["long sessions (each source's back to back)", long, 16_000],
    ["long sessions (each source's back to back)", long, 24_000],
    ["long sessions (each source's back to back)", long, 32_000],
    ["long sessions (each source's back to back)", long, 48_000],
    ["SWE-agent sessions × 6 back to back", marathon, 200_000],
  ] as const) {
    for (const earlyMark of [undefined, false] as const) {
      const run = await runBackground(sessions, {
        window,
        callMs: CALL_MS,
        summaryMs: SUMMARY_MS,
        ...(earlyMark === false ? { config: { earlyMark: false } } : {}),
      });
      const wait = median(run.waits);
      const foreground = median(run.foregroundMs) || SUMMARY_MS;
      const mode = earlyMark === false ? "foreground only" : "background from 85 %";
      const resolved = run.applied + run.discarded;
      console.log(
        `| ${label}, ${mode} | ${window.toLocaleString("en-US")} | ${run.applied + run.foreground} | ${run.started} | ${run.applied}${resolved ? ` (${Math.round((run.applied / resolved) * 100)} % of those the threshold came for)` : ""} | ${run.discarded} | ${run.started - resolved} | ${wait.toFixed(1)} ms | ${foreground.toFixed(1)} ms | ${(wait / foreground).toFixed(2)} |`,
      );
      for (const [reason, count] of run.discardReasons) console.log(`(discarded ${count}×: ${reason})`);
      total.started += run.started;
      total.applied += run.applied;
      total.resolved += resolved;
      if (earlyMark === undefined) {
        total.waits.push(...run.waits);
        total.foregroundMs.push(...run.foregroundMs);
      }
      if (run.overflows > 0) console.log(`(${run.overflows} overflows)`);
    }
  }
  console.log(
    `\nAll windows: ${total.applied} of ${total.resolved} background summaries the threshold came for were applied (${Math.round((total.applied / Math.max(1, total.resolved)) * 100)} %; ${total.started} started); over every summary at the threshold, the median wait is ${median(total.waits).toFixed(1)} ms, ${(median(total.waits) / (median(total.foregroundMs) || SUMMARY_MS)).toFixed(2)}× the median foreground summary (${(median(total.foregroundMs) || SUMMARY_MS).toFixed(1)} ms).`,
  );
}

void main();
