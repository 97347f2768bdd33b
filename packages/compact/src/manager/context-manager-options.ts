import type {
  ModelLimits,
  ModelProvider,
  SessionMemorySource,
  TextBlock,
  ToolDefinition,
} from "@unforget/core";
import type { SessionHooks } from "@unforget/hooks";
import type { Calibrator, ModelPricing } from "@unforget/tokens";
import type { TranscriptEntry } from "@unforget/transcript";
import type { KeepWindowOptions } from "../conversation/keep-window.ts";
import type { CollapseLayerOptions } from "../layers/collapse-context.ts";
import type { Layer } from "../layers/layer.ts";
import type { MicrocompactLayerOptions } from "../layers/microcompact.ts";
import type { ObservationMaskingOptions } from "../layers/observation-masking.ts";
import type { SnipOptions } from "../layers/snip-compact.ts";
import type { ToolResultBudgetLayerOptions } from "../layers/tool-result-budget.ts";
import type { CompactionPolicy } from "../policy/compaction-policy.ts";
import type { ContinuationStyle } from "../summary/compaction-outcome.ts";
import type { AttachmentProvider } from "../summary/rehydration.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import type { ResultRetentionSetting } from "../tool-outputs/compactable-tools.ts";
import type { ContextEventListener } from "./context-events.ts";
import type { ContextManager } from "./context-manager.ts";
import type { TranscriptSink } from "./context-view.ts";
import type { NativeContextOptions } from "./native-context.ts";

/** Where auto-compaction fires: a share of the usable window, or an absolute token count. */
export type ThresholdSetting = { percent: number } | { tokens: number };

/** Which layers run and how; every layer can be switched off with `false`. */
export interface ContextManagerConfig {
  /** The automatic ladder: "auto" (default) or "off". Off means off: at the blocking limit `prepare` refuses with `CompactionDisabledError`. */
  proactive?: "auto" | "off";
  /** Reactive compaction after a prompt-too-long error: "on" (default) or "off" (then `recover` says so). */
  emergency?: "on" | "off";
  /** Auto-compaction threshold for every model (only ever earlier than the default). */
  threshold?: ThresholdSetting;
  /** Per-model thresholds, by model id; win over `threshold`. */
  thresholds?: Record<string, ThresholdSetting>;
  /**
   * The ladder, in order: the default layers (`createDefaultLayers(config)`), or a function that gets them and
   * returns the list to run (extended, reordered, some left out). Names must be unique.
   */
  layers?: readonly Layer[] | ((defaults: readonly Layer[]) => readonly Layer[]);
  /**
   * What decides which layers are due. Default `createWorkingSetPolicy` (with `cheapLayers`, `earlyMark`,
   * `cacheTtl` and the model's prices): stale tool output is folded when the cache rent paid on it equals the
   * price of the break. `createFixedLevelPolicy` is the other built-in. One policy object serves one manager.
   */
  policy?: CompactionPolicy;
  /**
   * How long the provider keeps the prompt cache the session's breakpoints ask for: "5m" (default, the API's)
   * or "1h". The default policy folds stale output for free after an idle gap that outlives it, and prices a
   * break with the lifetime's write rate.
   */
  cacheTtl?: "5m" | "1h";
  /**
   * Share of the threshold from which a summary may start in the background, off the critical path, so that
   * little waits at the threshold (when a dry run shows the cheap layers would not keep the context down);
   * default 0.85, `false` to summarise only at the threshold. Read by the default policy.
   */
  earlyMark?: number | false;
  /** How the model is told to go on after an automatic compaction; default "interactive". */
  continuation?: ContinuationStyle;
  /**
   * When the cheap layers act (all in one call, so the prompt cache breaks once): at `level` × threshold
   * (default 0.95), down to `target` × threshold (0.3), each only when it frees at least
   * `minimumFreedShare` × threshold (0.2); collapse keeps `protectShare` × threshold of recent output (0) beyond
   * its last two rounds.
   * The defaults were chosen on the corpus replay benchmark: every cache break costs a full uncached request,
   * so each one must buy many calls of growth. With the working-set policy (the default), between those levels
   * the stale rounds fold when ski rental says, each fold freeing at least `clearAtLeastShare` × threshold
   * (0.07), and past `ceilingShare` × threshold (1) the context falls to the floor at once.
   */
  cheapLayers?: {
    level?: number;
    target?: number;
    minimumFreedShare?: number;
    protectShare?: number;
    clearAtLeastShare?: number;
    ceilingShare?: number;
  };
  toolResultBudget?: false | ToolResultBudgetLayerOptions;
  /**
   * Middle snip by size in a batch of the cheap layers: off by default (collapse keeps a record of each call,
   * snip does not). The snip tool works unless this is `false`.
   */
  snip?: false | Omit<SnipOptions, "now">;
  /** Time-based clearing after an idle gap, and pruning of old outputs at the cheap level. */
  microcompact?: false | MicrocompactLayerOptions;
  /** Keep only the last N tool outputs verbatim; off by default. */
  observationMasking?:
    | false
    | Omit<ObservationMaskingOptions, "now" | "retention" | "saveOutput" | "originalOutput">;
  collapse?: false | Omit<CollapseLayerOptions, "protectShare">;
  /** Compaction from session notes (needs `sessionMemory`); the keep-window scales down with the window. */
  sessionMemoryCompact?: false | { keep?: KeepWindowOptions };
  /** The summary: its verbatim tail and its size. */
  summary?: { keep?: KeepWindowOptions; maxTokens?: number };
  /** Provider-side strategies, used when the provider's capabilities allow. */
  native?: NativeContextOptions;
  /** Consecutive failures that open a layer's circuit breaker; default 3. */
  breakerThreshold?: number;
  /** Calls an open breaker waits before its layer is tried again; default 20. */
  breakerCoolDownCalls?: number;
  /**
   * Pinned messages (`ContextManager.pin`): never cleared, folded, snipped or summarised, within `maxShare` of the
   * context window (default 0.25); a pin past it is refused with `PinLimitError`.
   */
  pins?: { maxShare?: number };
  /** Share of the threshold that re-injected attachments may take after a compaction; default 0.25 (at most 50,000 tokens). */
  rehydrationShare?: number;
}

export interface ContextManagerOptions {
  /** The session's model id. */
  model: string;
  /** The session's provider: limits (learned ones included), model summaries, native strategies. Optional offline. */
  provider?: ModelProvider;
  /** Window and output limit, instead of asking the provider (a replay at a chosen window). */
  limits?: Pick<ModelLimits, "contextWindow" | "maxOutputTokens">;
  /** The session's hook bus: PreCompact (instructions, veto), PostCompact, SessionStart after a compaction. */
  hooks?: SessionHooks;
  sessionId?: string;
  /** Writes summaries; default the model summariser when there is a provider, else the extractive one. */
  summarizer?: Summarizer;
  /** Used while the summariser's breaker is open; default the extractive summariser. */
  fallbackSummarizer?: Summarizer;
  /** Session notes for compaction without a model call. */
  sessionMemory?: SessionMemorySource;
  /**
   * Folder for large tool outputs and for the old outputs of tools that are not reproducible, saved there before
   * they are cleared (`<sessionDir>/tool-results/`). Without it such outputs stay, and large new ones are cut
   * in the middle.
   */
  sessionDir?: string;
  /**
   * What each tool's old results may become (core's `Tool.resultRetention`), by tool name: the session passes
   * its tools' declarations, the adapters the host's. A tool it does not answer for is "reproducible" when its
   * name is one of `DEFAULT_COMPACTABLE_TOOLS`, else "persist". A layer's `compactableTools` overrides it.
   */
  resultRetention?: ResultRetentionSetting;
  /** Where transcript entries go (a `TranscriptWriter`). */
  transcript?: TranscriptSink;
  /** Entries of an earlier run: the manager resumes with their projection, its compactions and its rate of growth. */
  resume?: readonly TranscriptEntry[];
  /**
   * The manager this one takes over from in the same session (another model; `resume` is its `entries`): the
   * compactions so far, the recompaction chain and the rate of growth go on from that manager's, which `resume`
   * alone cannot give when it holds only the entries the context is projected from (`retainEntries: "context"`).
   */
  continues?: ContextManager;
  /**
   * What `entries` (and the records beside them) keeps in memory: "all" (default) every entry since the start;
   * "context" only what the current context is projected from — from the latest compact boundary's preserved
   * segment on, pruned at each boundary — so that a session's memory stays bounded over any number of
   * compactions. The transcript sink still receives every entry: the whole record is the transcript on disk.
   */
  retainEntries?: "all" | "context";
  /**
   * The system prompt and tools the requests will send, when known before the first `prepare`: `status()` counts
   * them from the start, as the first request will (a new context, or a resumed one that no response measured
   * since its last compaction). Each `prepare` gives them again.
   */
  request?: Pick<PrepareOptions, "system" | "tools" | "maxTokens">;
  /** Context restored after each compaction, in order. */
  attachments?: readonly AttachmentProvider[];
  /** Time source (ms since the epoch) for timestamps and idle gaps; replays pass the recorded clock so time-based layers decide as they did. */
  clock?: () => number;
  /** Monotonic milliseconds for durations and waits (`durationMs`, `waitedMs`); default `performance.now`. Never the replay's clock. */
  timer?: () => number;
  /** Ids of the entries the manager writes; default random. Replays pass a counter for byte-identical output. */
  idFactory?: (kind: string) => string;
  /** Learns how far the estimate is from the provider's counts, per model; default a fresh one. */
  calibrator?: Calibrator;
  /** The model's prices (`getModelPricing(model)` by default): the default policy weighs cache reads against cache writes with them. */
  pricing?: ModelPricing;
  config?: ContextManagerConfig;
  onEvent?: ContextEventListener;
}

export interface PrepareOptions {
  /** The request's system prompt and tools: counted, and reused by a model summary (same cache prefix). */
  system?: string | TextBlock[];
  tools?: ToolDefinition[];
  /** The request's output limit (reused unchanged by a model summary). */
  maxTokens?: number;
  /**
   * Who is asking: "main" (default) or a call that must never trigger compaction ("compact", "session_memory")
   * — those would deadlock or recurse.
   */
  querySource?: "main" | "compact" | "session_memory" | (string & Record<never, never>);
  signal?: AbortSignal;
}
