import Table from "cli-table3";
import { formatWindow } from "./parse-window.ts";
import { countCompactions, type SessionReplay, windowAdvice } from "./replay-session.ts";

const number = (value: number) => Math.round(value).toLocaleString("en-US");
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

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
  const ratio = stats.naiveInputCost > 0 ? stats.inputCost / stats.naiveInputCost : 1;
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
    ["input cost (tokens)", number(stats.inputCost)],
    ["  without management", `${number(stats.naiveInputCost)} (managed: ${ratio.toFixed(2)}×)`],
    ["invariant violations", stats.violations.length === 0 ? "none" : number(stats.violations.length)],
  );
  lines.push(totals.toString());
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
