import type { CompactTrigger } from "@unforget/transcript";

/** The layers of the ladder, cheapest first, as they appear in transcripts, events and reports. */
export const LAYER_NAMES = [
  "tool-result-budget",
  "snip",
  "microcompact",
  "cached-microcompact",
  "observation-masking",
  "collapse",
  "session-memory",
  "full",
  "reactive",
  "native",
] as const;

export type LayerName = (typeof LAYER_NAMES)[number];

/** What one layer did during one `prepare` / `recover` / `compact` call. */
export interface LayerReport {
  layer: LayerName;
  trigger: CompactTrigger;
  tokensBefore: number;
  tokensAfter: number;
  /** Estimated tokens removed (≥ 0). */
  tokensFreed: number;
  durationMs: number;
  /** Layer counts ("cleared", "persisted", "snipped", "runs", …) and, for summaries, the summariser's calls and tokens. */
  stats: Record<string, number>;
  /** Which summariser wrote the summary, for summary layers. */
  summarizer?: string;
  /** Messages the summary stands for, for summary layers. */
  messagesSummarized?: number;
  /** One line for logs: why the layer acted. */
  reason: string;
}

/** Everything the manager reports while it works: for UIs, logs and the replay report. */
export type ContextEvent =
  | ({ type: "layer" } & LayerReport)
  | {
      type: "layer-failed";
      layer: LayerName;
      trigger: CompactTrigger;
      error: string;
      consecutiveFailures: number;
    }
  | { type: "breaker-open"; layer: LayerName; consecutiveFailures: number }
  | { type: "vetoed"; layer: LayerName; by: string; reason: string }
  | { type: "background-started"; messages: number; tokens: number }
  | { type: "background-applied"; waitedMs: number; messagesSummarized: number }
  | { type: "background-discarded"; reason: string }
  | { type: "cache-break"; previousCacheRead: number; cacheRead: number; droppedTokens: number }
  | { type: "keep-alive"; layer: LayerName };

export type ContextEventListener = (event: ContextEvent) => void;
