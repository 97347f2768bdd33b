import { ConfigurationError, type Message } from "@unforget/core";
import { DEFAULT_PADDING } from "@unforget/tokens";
import type { CompactTrigger } from "@unforget/transcript";
import { estimateTokens } from "../conversation/conversation.ts";
import type { NewestTurn } from "../conversation/newest-turn.ts";
import { REFERENCE_THRESHOLD_TOKENS } from "../defaults.ts";
import type { LayerReport } from "../manager/context-events.ts";
import type { CompactionOutcome, CompactRange, ContinuationStyle } from "../summary/compaction-outcome.ts";
import type { CacheSafeParameters, Summarizer } from "../summary/summarizer.ts";
import type { RetentionLookup } from "../tool-outputs/compactable-tools.ts";
import type { LayerResult } from "./layer-result.ts";

/** A run of a layer that was asked for by name (the snip and compact tools, `compact()`), not by the context's size. */
export interface LayerRequest {
  /** Extra instructions for a summary (this compaction only). */
  instructions?: string;
  /** Snip: how many of the most recent messages to keep. */
  keepRecentMessages?: number;
  /** A partial summary: before `upTo`, or from `from` on. */
  range?: CompactRange;
}

/** The context as the policy sees it when it decides whether a layer is due. */
export interface LadderState {
  /** Why the ladder runs: "auto" before a model call, "manual" for `compact()` and the tools, "reactive" in `recover()`. */
  trigger: CompactTrigger;
  /** Context size now, in tokens (usage-anchored); updated after every layer that acted. */
  tokens: number;
  /** Size at which the summaries are due. */
  threshold: number;
  /** Size past which a request must not be sent: the emergency path runs there, even against a veto. */
  blockingLimit: number;
  contextWindow: number;
  /** Messages added since the previous call (0 in `recover` and `compact`). */
  added: number;
  /** Index of the first of them in the messages. */
  firstNew: number;
  /** Milliseconds since the last assistant response, by the session's clock (how cold the prompt cache is). */
  idleMs: number;
  /** The policy's decision for this call: the cheap layers act now, all together (one prompt-cache break). */
  batch: boolean;
  /** Size, in tokens, the cheap layers fold toward in a batch; in `recover`, the size the request must get under. */
  target: number;
  /** In a batch, each cheap layer acts only if it frees at least this many tokens (each act breaks the cache). */
  minimumFreedTokens: number;
  /** Layers asked for by name before this call, by layer name. */
  requested: ReadonlyMap<string, LayerRequest>;
  /** Layers that already acted in this call (a layer runs at most once per call). */
  acted: ReadonlySet<string>;
  /** A summary is being written in the background (or waits to be spliced in) over the older messages. */
  backgroundPending?: boolean;
}

/** What a layer is given when it runs: the state it was due in, and what it needs to act. */
export interface LayerContext extends LadderState {
  /** Why it runs now (the policy's reason), for reports and logs. */
  reason: string;
  /** The time of its edits (replacement messages carry it), by the session's clock. */
  now: number;
  /** `threshold / 167,000`, at most 1: token sizes written for a 200K window are multiplied by it. */
  scale: number;
  /** The session folder, where large outputs are saved (`<sessionDir>/tool-results/`). */
  sessionDir?: string;
  /**
   * Saves an output to its file in the session folder, atomically and durably, awaiting the write already
   * started when the output arrived: resolves once the file holds the text (nothing may point at it before).
   */
  persistOutput?: (path: string, text: string) => Promise<void>;
  /** What each tool's old results may become (the session's `resultRetention`, then the well-known names). */
  retention?: RetentionLookup;
  /** The output a tool result held when it arrived, before any layer replaced it (records describe that). */
  originalOutput?: (toolUseId: string) => string | undefined;
  /** Messages kept across the latest compact boundary from before it: their outputs count as stale. */
  staleMessageIds: ReadonlySet<string>;
  /** The newest turn, which the layer must leave in place (the budget may cut it in the middle). */
  newestTurn: NewestTurn;
  /** Set when the layer was asked for by name. */
  request?: LayerRequest;
  /** Set for a dry run (an estimate of what the layer would free): nothing is recorded, so nothing is written. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** What the summary pipeline adds for a summary layer. */
export interface SummaryLayerContext extends LayerContext {
  /** Writes the summary: the session's summariser, or the fallback while its breaker is open. */
  summarizer: Summarizer;
  /** The user's instructions, then each PreCompact plugin's. */
  instructions?: string;
  continuation: ContinuationStyle;
  /** Most tokens the summary may take. */
  summaryMaxTokens: number;
  /** Most tokens a model summariser may read (its window less the summary and the prompt). */
  maxInputTokens: number;
  /** Tokens the attachments re-injected after the compaction will take. */
  reservedTokens: number;
  /** The live request's system, tools and output limit, so a model summary shares its prompt cache. */
  cacheSafe: CacheSafeParameters;
  /** The transcript's path, which the summary points the model at. */
  transcriptPath?: string;
  onKeepAlive?: () => void;
}

/** What every layer carries for the people and tools that show it. */
interface LayerDescription {
  /** Unique within a ladder: in transcripts, events, reports, breakers and statistics. Kebab-case. */
  readonly name: string;
  /** Shown in tables and reports ("Tool-result budget"). */
  readonly label: string;
  /** The colour of its marks in charts and reports (a CSS hex colour). */
  readonly color: string;
  /** Called once per run it reports: one sentence on what it did, for people. */
  describe(report: LayerReport): string;
  /**
   * True when it acts only when asked by name (a tool, `compact()`), never because of the context's size, so
   * that reports say so rather than calling it "not needed".
   */
  readonly onRequestOnly?: boolean;
}

/** A layer that edits messages without a model call: it returns the edits, which the transcript records. */
export interface EditLayer extends LayerDescription {
  readonly kind: "edit";
  /** True for a layer that may cut the newest turn in the middle (the tool-result budget); none may remove it. */
  readonly cutsNewestTurn?: boolean;
  /** Called before each model call (and in `recover`), in ladder order: why the layer should run now, or false. */
  due(state: LadderState): string | false;
  /** Called when due. Never mutates `messages`; returns its edits and the messages they give. Errors open its breaker. */
  run(messages: readonly Message[], context: LayerContext): LayerResult | Promise<LayerResult>;
}

/** A layer that replaces older messages by a summary at a compact boundary (or a range in place). */
export interface SummaryLayer extends LayerDescription {
  readonly kind: "summary";
  /** As `EditLayer.due`; summary layers are tried in order until one applies. */
  due(state: LadderState): string | false;
  /** Called when due, after PreCompact. Resolves to the compaction, or undefined when it has nothing to offer (no notes yet). */
  run(messages: readonly Message[], context: SummaryLayerContext): Promise<CompactionOutcome | undefined>;
  /** True when it can run on a snapshot in the background, started before the threshold and spliced in there. */
  readonly background?: boolean;
  /** Called at the early mark instead of a background run (the session-memory layer asks for fresh notes). */
  early?(): void;
}

/** A rung of the ladder. The manager runs an ordered list of them; the built-in ones are made the same way. */
export type Layer = EditLayer | SummaryLayer;

const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * Checks a layer's description and returns it frozen: a kebab-case name, a label, a CSS hex colour, and the
 * functions its kind needs. Throws `ConfigurationError` saying which field is wrong.
 */
export function defineLayer<T extends Layer>(layer: T): T {
  const problem = !NAME.test(String(layer.name))
    ? `its name ${JSON.stringify(layer.name)} is not kebab-case (e.g. "strip-images")`
    : typeof layer.label !== "string" || layer.label.trim().length === 0
      ? "it has no label"
      : !COLOR.test(String(layer.color))
        ? `its colour ${JSON.stringify(layer.color)} is not a CSS hex colour (e.g. "#0891b2")`
        : layer.kind !== "edit" && layer.kind !== "summary"
          ? `its kind ${JSON.stringify((layer as { kind: unknown }).kind)} is neither "edit" nor "summary"`
          : typeof layer.due !== "function" ||
              typeof layer.run !== "function" ||
              typeof layer.describe !== "function"
            ? "it needs the functions due, run and describe"
            : undefined;
  if (problem) {
    throw new ConfigurationError(`The compaction layer ${String(layer.name)} is not valid: ${problem}.`, {
      setting: "layers",
    });
  }
  return Object.freeze(layer);
}

/** Checks a ladder: layers defined with `defineLayer`'s rules and unique names. */
export function checkLadder(layers: readonly Layer[]): readonly Layer[] {
  const names = new Set<string>();
  for (const layer of layers) {
    defineLayer(layer);
    if (names.has(layer.name)) {
      throw new ConfigurationError(
        `Two compaction layers are named "${layer.name}"; give each layer of the ladder its own name.`,
        { setting: "layers" },
      );
    }
    names.add(layer.name);
  }
  return Object.freeze([...layers]);
}

/** `threshold / 167,000`, at most 1: how much the sizes written for a 200K window (defaults.ts) shrink for this window. */
export function scaleFor(threshold: number): number {
  return Math.min(1, threshold / REFERENCE_THRESHOLD_TOKENS);
}

/**
 * The cheap layers' target as a size of the messages alone (unpadded, without system and tools), which is
 * what they measure: the messages' estimate less what the context must lose to reach `context.target`.
 */
export function messagesTarget(messages: readonly Message[], context: LadderState): number {
  return Math.max(
    0,
    Math.floor(estimateTokens(messages) - (context.tokens - context.target) / DEFAULT_PADDING),
  );
}

/** The key of a summary request in `LadderState.requested`: any summary layer may answer it. */
export const SUMMARY_REQUEST = "summary";

/**
 * When a summary layer is due: when one was asked for (`compact()`, the compact tool), in `recover` while the
 * request is over its target (when `reactive`), and before a model call at the threshold.
 */
export function summaryDue(state: LadderState, reactive: boolean): string | false {
  if (state.requested.has(SUMMARY_REQUEST)) return "manual compaction";
  if (state.trigger === "reactive") {
    return reactive && state.tokens > state.target ? "the provider said the prompt was too long" : false;
  }
  if (state.trigger === "auto" && state.tokens >= state.threshold) {
    return state.tokens >= state.blockingLimit
      ? `context at ${state.tokens} tokens, at the blocking limit (${state.blockingLimit})`
      : `context at ${state.tokens} tokens, threshold ${state.threshold}`;
  }
  return false;
}

/** `count noun(s)` for report sentences. */
export function plural(count: number, noun: string): string {
  return `${count.toLocaleString("en-US")} ${noun}${count === 1 ? "" : "s"}`;
}
