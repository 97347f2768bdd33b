import Table from "cli-table3";
import { formatWindow } from "../parse-window.ts";
import { countCompactions, type SessionReplay, windowAdvice } from "./replay-session.ts";

const number = (value: number) => Math.round(value).toLocaleString("en-US");
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

/** Dollars: cents for sums over a dollar, hundredths of a cent below. */
export function formatUsd(value: number): string {
  return `$${value.toFixed(Math.abs(value) >= 1 ? 2 : 4)}`;
}

/** The prices a replay was billed at, in one line. */
export function describePricing(
  replay: Pick<SessionReplay, "pricing" | "cacheTtl"> & Partial<Pick<SessionReplay, "summaryPricing">>,
): string {
  const { pricing, cacheTtl } = replay;
  const summaries = replay.summaryPricing;
  const ownSummaries =
    summaries !== undefined && summaries.model !== pricing.model
      ? `; summaries by ${summaries.model}: $${summaries.input} input, $${summaries.output} output`
      : "";
  const write = cacheTtl === "1h" ? pricing.cacheWrite1h : pricing.cacheWrite5m;
  const name = pricing.known
    ? pricing.model
    : `${pricing.model} (not in the price table: Sonnet-tier prices)`;
  return `${name}: $${pricing.input} input, $${write} cache write (${cacheTtl}), $${pricing.cacheRead} cache read, $${pricing.output} output per million tokens${ownSummaries}`;
}

/** The end-of-run table: what the replay did, in two tables (totals, then the ladder's layers). */
export function renderReplayTable(replay: SessionReplay, sessionLabel: string): string {
  const { stats } = replay;
  const lines: string[] = [];
  const instance = replay.session.instance
    ? ` (run on line ${replay.session.instance.line} of ${replay.session.instance.count})`
    : "";
  lines.push(
    `${sessionLabel}${instance}: ${replay.session.format} session, ${number(replay.session.messages.length)} messages, replayed at a ${formatWindow(replay.window)}-token window with the ${replay.summarizer} summariser`,
  );
  const compactions = countCompactions(replay);
  const totals = new Table({ style: { head: [], border: [], compact: true }, colAligns: ["left", "right"] });
  const ratio =
    stats.slidingWindowInputCostUsd > 0 ? stats.inputCostUsd / stats.slidingWindowInputCostUsd : 1;
  const summaries = replay.calls.reduce((sum, call) => sum + call.summarizerCostUsd, 0);
  totals.push(
    ["model calls", number(stats.calls)],
    [
      "peak tokens / window",
      `${number(stats.peakTokens)} / ${number(stats.window)} (${percent(stats.peakTokens / stats.window)})`,
    ],
    ["overflows", number(stats.overflows)],
    ["compactions (summaries)", number(compactions)],
    ["layer actions", number(replay.actions.length)],
    [
      "summariser calls",
      `${number(stats.summarizerCalls)} (${number(stats.summarizerInputTokens)} input tokens)`,
    ],
    ["prefix reuse (prompt cache)", percent(stats.prefixReuse)],
    ["input cost", formatUsd(stats.inputCostUsd)],
    [
      "  cache read / written / uncached",
      `${number(stats.cacheReadTokens)} / ${number(stats.cacheWriteTokens)} / ${number(stats.uncachedInputTokens)} tokens`,
    ],
    ["  summaries (input and output)", formatUsd(summaries)],
    [
      "  no compaction (oldest dropped)",
      `${formatUsd(stats.slidingWindowInputCostUsd)} (managed: ${ratio.toFixed(2)}×)`,
    ],
    [
      "error codes kept",
      stats.errorCodes.seen === 0 ? "none seen" : `${stats.errorCodes.kept} of ${stats.errorCodes.seen}`,
    ],
    ["invariant violations", stats.violations.length === 0 ? "none" : number(stats.violations.length)],
  );
  lines.push(totals.toString());
  lines.push(`Prices: ${describePricing(replay)}.`);
  const layers = new Table({
    head: ["layer", "runs", "tokens freed"],
    style: { head: [], border: [], compact: true },
    colAligns: ["left", "right", "right"],
  });
  const idle: string[] = [];
  const onRequest: string[] = [];
  for (const layer of replay.layers) {
    const run = stats.layers[layer.name] ?? { runs: 0, tokensFreed: 0 };
    if (run.runs > 0) layers.push([layer.label, number(run.runs), number(run.tokensFreed)]);
    else if (layer.onRequestOnly) onRequest.push(layer.label);
    else idle.push(layer.label);
  }
  if (layers.length > 0) lines.push(layers.toString());
  if (layers.length === 0) lines.push(`No layer had to act: ${windowAdvice(replay)}`);
  else if (idle.length > 0) lines.push(`Not needed: ${idle.join(", ")}.`);
  if (onRequest.length > 0)
    lines.push(`Only when the model asks for it, which a replay never does: ${onRequest.join(", ")}.`);
  for (const violation of stats.violations.slice(0, 10)) lines.push(`violation: ${violation}`);
  if (stats.violations.length > 10) lines.push(`… and ${stats.violations.length - 10} more violations`);
  return `${lines.join("\n")}\n`;
}
