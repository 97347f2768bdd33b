import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { appPath } from "../app-path.ts";
import { formatWindow } from "../parse-window.ts";
import { countCompactions, type LayerAction, type SessionReplay, windowAdvice } from "./replay-session.ts";
import { describePricing, formatUsd } from "./replay-table.ts";

/** A layer's action as the chart draws it: a bar from `low` to `high` tokens at its call. */
export interface ChartedAction extends LayerAction {
  low: number;
  high: number;
}

/** What the page's script draws, embedded in the page as JSON. */
export interface ReportData {
  window: number;
  tokens: number[];
  naive: number[];
  threshold: number[];
  /**
   * Per call, the working set's ceiling (past it the cheap layers fall in one break) and its floor (where the
   * last fall left the context); null where the policy keeps no working set, or before the first fall.
   */
  ceiling: (number | null)[];
  floor: (number | null)[];
  /** Per call: tokens read from the prompt cache and written to it. */
  cacheRead: number[];
  cacheWrite: number[];
  /** Per call, in dollars: its input and the summaries written before it; the same call with no compaction. */
  costUsd: number[];
  referenceUsd: number[];
  /** Each layer's label and colour, by name (from the layers themselves). */
  layers: Record<string, { label: string; color: string }>;
  actions: ChartedAction[];
}

/**
 * Places each layer action on the chart in the same units as the line: at its call, the request would have
 * been the previous request plus what the session added since (the growth of the unmanaged line); the
 * layers brought it down to what was sent. That drop is shared among the call's layers in proportion to
 * what each reported freeing, the first layer on top.
 */
export function chartActions(replay: SessionReplay): ChartedAction[] {
  const byCall = new Map<number, LayerAction[]>();
  for (const note of replay.actions) {
    const list = byCall.get(note.call) ?? [];
    list.push(note);
    byCall.set(note.call, list);
  }
  const charted: ChartedAction[] = [];
  for (const [callNumber, notes] of byCall) {
    const call = replay.calls[callNumber - 1]!;
    const previous = replay.calls[callNumber - 2];
    const unmanaged = previous
      ? previous.tokens + (call.naiveTokens - previous.naiveTokens)
      : call.naiveTokens;
    const drop = Math.max(0, unmanaged - call.tokens);
    const weights = notes.map((note) => Math.max(0, note.tokensFreed));
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    let high = call.tokens + drop;
    notes.forEach((note, position) => {
      const share = total > 0 ? (drop * weights[position]!) / total : drop / notes.length;
      const low = Math.max(call.tokens, Math.round(high - share));
      charted.push({ ...note, low, high: Math.round(high) });
      high -= share;
    });
  }
  return charted;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
const number = (value: number) => Math.round(value).toLocaleString("en-US");
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

/** JSON that is safe inside a `<script>` element (no `</script>`, no HTML comment openers). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Chart.js's UMD build, read from the installed package, so the page needs no network to draw. */
export function chartLibrarySource(): string {
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve("chart.js")), "chart.umd.min.js");
  return readFileSync(file, "utf8").replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n");
}

function clientScript(): string {
  return readFileSync(appPath("assets", "report-client.js"), "utf8");
}

const REPORT_CSS = `:root { --ink: #0f172a; --muted: #64748b; --line: #e2e8f0; --panel: #ffffff; --page: #f8fafc; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--page); color: var(--ink); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 16px; margin: 32px 0 10px; }
.sub { color: var(--muted); margin: 0 0 20px; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 22px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .hint { color: var(--muted); font-size: 12px; }
.card.good .value { color: #15803d; } .card.bad .value { color: #b91c1c; }
.chart-panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px; margin-top: 16px; position: relative; }
.chart-box { position: relative; height: 440px; }
.note { color: var(--muted); margin: 10px 2px 0; }
table { border-collapse: collapse; width: 100%; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
th, td { text-align: left; padding: 6px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f1f5f9; font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #334155; }
td:nth-child(2), td:nth-child(3) { font-variant-numeric: tabular-nums; white-space: nowrap; }
#layers td:nth-child(2), #layers td:nth-child(3) { text-align: right; }
tr.idle td { color: #94a3b8; }
.when { margin-left: 8px; font-size: 12px; font-style: italic; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 8px; vertical-align: baseline; }
.excerpt { color: var(--muted); font-size: 12px; margin-top: 4px; }
#tooltip { position: absolute; pointer-events: none; background: #0f172a; color: #f8fafc; border-radius: 8px; padding: 10px 12px; font-size: 12px; max-width: 420px; box-shadow: 0 8px 24px rgba(15,23,42,.25); opacity: 0; z-index: 2; }
#tooltip .title { font-weight: 650; margin-bottom: 4px; }
#tooltip .row { display: flex; gap: 8px; justify-content: space-between; }
#tooltip .compaction { border-top: 1px solid #334155; margin-top: 6px; padding-top: 6px; }
#tooltip .compaction .what { color: #cbd5e1; margin-top: 2px; }
#tooltip .compaction .excerpt { color: #94a3b8; }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
`;

/**
 * The replay as one self-contained HTML page: the chart of context tokens per call (Chart.js, inlined) with
 * the threshold, the window, the unmanaged line and every compaction marked and explained on hover; the
 * totals; the layers; and every compaction in a table. Deterministic: the same replay gives the same bytes.
 */
export function renderReplayReport(replay: SessionReplay, label: string): string {
  const { stats } = replay;
  const data: ReportData = {
    window: replay.window,
    tokens: replay.calls.map((call) => call.tokens),
    naive: replay.calls.map((call) => call.naiveTokens),
    threshold: replay.calls.map((call) => call.threshold),
    ceiling: replay.calls.map((call) => call.workingSet?.ceiling ?? null),
    floor: replay.calls.map((call) => call.workingSet?.floor ?? null),
    cacheRead: replay.calls.map((call) => call.billing.cacheReadTokens),
    cacheWrite: replay.calls.map((call) => call.billing.cacheWriteTokens),
    costUsd: replay.calls.map((call) => call.inputCostUsd + call.summarizerCostUsd),
    referenceUsd: replay.calls.map((call) => call.slidingWindowCostUsd),
    layers: Object.fromEntries(
      replay.layers.map((layer) => [layer.name, { label: layer.label, color: layer.color }]),
    ),
    actions: chartActions(replay),
  };
  const naivePeak = Math.max(0, ...data.naive);
  const firstNaiveOverflow = replay.calls.find((call) => call.naiveTokens > replay.window)?.index;
  const naiveNote =
    firstNaiveOverflow === undefined
      ? `Without management the context would have peaked at ${number(naivePeak)} tokens, inside the window.`
      : `Without management the context would have reached ${number(naivePeak)} tokens (${(naivePeak / replay.window).toFixed(1)}× the window), overflowing from call ${firstNaiveOverflow} on.`;
  const instance = replay.session.instance ? ` · run on line ${replay.session.instance.line}` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>unforget replay · ${escapeHtml(label)}</title>
<style>
${REPORT_CSS}</style>
</head>
<body>
<main>
<h1>unforget replay</h1>
<p class="sub">${escapeHtml(label)}${escapeHtml(instance)} · ${escapeHtml(replay.session.format)} session · ${formatWindow(replay.window)}-token window · ${escapeHtml(replay.summarizer)} summariser · requests as ${escapeHtml(replay.model)}</p>
<section class="cards">
${renderCards(replay)}
</section>
<section class="chart-panel">
<div class="chart-box"><canvas id="chart" role="img" aria-label="Context tokens per model call, with the compaction threshold, the window and every compaction"></canvas></div>
<div id="tooltip" role="tooltip"></div>
<p class="note">Each bar is a layer's action: it spans the context before and after the layer acted. Hover a call to see what was sent and what each layer did. ${escapeHtml(naiveNote)}</p>
</section>
<h2>Layers</h2>
<table id="layers"><thead><tr><th>layer</th><th>runs</th><th>tokens freed</th></tr></thead><tbody>
${renderLayerRows(replay)}
</tbody></table>
<h2>What the layers did</h2>
${
  replay.actions.length === 0
    ? `<p class="note">Nothing: ${escapeHtml(windowAdvice(replay))}</p>`
    : `<table id="actions"><thead><tr><th>call</th><th>layer</th><th>tokens</th><th>what happened</th></tr></thead><tbody>
${renderActionRows(replay)}
</tbody></table>`
}
${
  stats.violations.length === 0
    ? ""
    : `<h2>Violations</h2><ul>${stats.violations.map((violation) => `<li>${escapeHtml(violation)}</li>`).join("")}</ul>`
}
<footer>Generated by <code>unforget replay</code>. Tokens are estimated the way the ContextManager counts them before each call. Each request carries cache breakpoints where a live loop puts them (system and tools, the last block compaction settled, the last message) and is billed by the prompt cache's rules: reads of what an earlier request wrote, writes of the rest (again after every change before the end and every idle gap longer than the cache's ${escapeHtml(replay.cacheTtl)}), and the summariser's calls (input uncached, and output). Prices: ${escapeHtml(describePricing(replay))}. "No compaction" sends every message and drops the oldest when the window is full. Chart by Chart.js, inlined: this page needs no network.</footer>
</main>
<script type="application/json" id="replay-data">${scriptJson(data)}</script>
<script>${chartLibrarySource()}</script>
<script>${clientScript()}</script>
</body>
</html>
`;
}

/** The figures at the top of the page: value and a hint each; overflows and violations green at zero, red above. */
function renderCards(replay: SessionReplay): string {
  const { stats } = replay;
  const ratio =
    stats.slidingWindowInputCostUsd > 0 ? stats.inputCostUsd / stats.slidingWindowInputCostUsd : 1;
  const cards: [string, string, string][] = [
    ["model calls", number(stats.calls), `${number(replay.session.messages.length)} messages`],
    [
      "peak context",
      number(stats.peakTokens),
      `${percent(stats.peakTokens / stats.window)} of the ${formatWindow(stats.window)} window`,
    ],
    ["overflows", number(stats.overflows), "requests over the window"],
    [
      "compactions",
      number(countCompactions(replay)),
      `summaries; ${number(replay.actions.length)} layer actions in all`,
    ],
    ["prefix reuse", percent(stats.prefixReuse), "of request tokens cacheable"],
    [
      "input cost",
      formatUsd(stats.inputCostUsd),
      `${ratio.toFixed(2)}× sending everything, oldest dropped (${formatUsd(stats.slidingWindowInputCostUsd)})`,
    ],
    [
      "cache writes",
      number(stats.cacheWriteTokens),
      `tokens written; ${number(stats.cacheReadTokens)} read, ${number(stats.uncachedInputTokens)} uncached`,
    ],
    [
      "error codes kept",
      stats.errorCodes.seen === 0 ? "–" : `${stats.errorCodes.kept} / ${stats.errorCodes.seen}`,
      "seen in tool output, still in the last request",
    ],
    ["violations", number(stats.violations.length), "broken pairs, lost user messages"],
  ];
  return cards
    .map(([name, value, hint]) => {
      const tone = name === "overflows" || name === "violations" ? (value === "0" ? " good" : " bad") : "";
      return `<div class="card${tone}"><div class="label">${name}</div><div class="value">${value}</div><div class="hint">${escapeHtml(hint)}</div></div>`;
    })
    .join("\n");
}

/** A layer's swatch and label, from the layer itself. */
function layerCell(replay: SessionReplay, name: string): string {
  const layer = replay.layers.find((candidate) => candidate.name === name);
  return `<span class="swatch" style="background:${layer?.color ?? "#475569"}"></span>${escapeHtml(layer?.label ?? name)}`;
}

/** One row per layer of the ladder, also those that never ran (greyed; a layer that acts only when asked says so). */
function renderLayerRows(replay: SessionReplay): string {
  return replay.layers
    .map((layer) => {
      const run = replay.stats.layers[layer.name] ?? { runs: 0, tokensFreed: 0 };
      const when = layer.onRequestOnly ? '<span class="when">only when the model asks for it</span>' : "";
      return `<tr class="${run.runs === 0 ? "idle" : ""}"><td>${layerCell(replay, layer.name)}${when}</td><td>${number(run.runs)}</td><td>${number(run.tokensFreed)}</td></tr>`;
    })
    .join("\n");
}

/** Every layer action: its call, layer, the manager's count before and after, and what it did. */
function renderActionRows(replay: SessionReplay): string {
  return replay.actions
    .map(
      (note) =>
        `<tr><td>${note.call}</td><td>${layerCell(replay, note.layer)}</td><td>${number(note.tokensBefore)} → ${number(note.tokensAfter)}</td><td>${escapeHtml(note.description)}${note.summaryExcerpt ? `<div class="excerpt">${escapeHtml(note.summaryExcerpt)}</div>` : ""}</td></tr>`,
    )
    .join("\n");
}
