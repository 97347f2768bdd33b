import { applyLayerEdits, type ContextEdit } from "@unforget/transcript";
import type { CacheBreakDetector } from "../cache/cache-break-detector.ts";
import { CompactionFailedError } from "../compact-error.ts";
import { estimateTokens } from "../conversation/conversation.ts";
import { findNewestTurn, type NewestTurn, touchesNewestTurn } from "../conversation/newest-turn.ts";
import { withoutPinned } from "../conversation/pinned.ts";
import {
  type EditLayer,
  type LadderState,
  type Layer,
  type LayerContext,
  type LayerRequest,
  SUMMARY_REQUEST,
  type SummaryLayer,
  scaleFor,
} from "../layers/layer.ts";
import { isoTime } from "../layers/layer-result.ts";
import type { CompactionPolicy } from "../policy/compaction-policy.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import type { RetentionLookup } from "../tool-outputs/compactable-tools.ts";
import type { OutputSaver } from "../tool-outputs/output-saver.ts";
import type { Breakers } from "./circuit-breaker.ts";
import type { CompactionPreview, ContextEvents, DeclinedCompaction, LayerReport } from "./context-events.ts";
import type {
  ContextManagerConfig,
  ContextManagerOptions,
  PrepareOptions,
} from "./context-manager-options.ts";
import type { ContextSize } from "./context-size.ts";
import type { ContextView } from "./context-view.ts";
import type { Pins } from "./pins.ts";
import type { RequestShape } from "./request-shape.ts";

/** The levels of the current window, in tokens. */
export interface WindowLevels {
  contextWindow: number;
  effectiveWindow: number;
  threshold: number;
  blockingLimit: number;
}

/** What the manager's parts share: one session's view of the context and its services. */
export interface ManagerCore {
  readonly options: ContextManagerOptions;
  readonly config: ContextManagerConfig;
  readonly layers: readonly Layer[];
  readonly policy: CompactionPolicy;
  readonly view: ContextView;
  readonly size: ContextSize;
  readonly events: ContextEvents;
  readonly breakers: Breakers;
  readonly shape: RequestShape;
  readonly cacheBreaks: CacheBreakDetector;
  readonly summarizer: Summarizer;
  readonly fallbackSummarizer: Summarizer;
  /** What each tool's old results may become (`ContextManagerOptions.resultRetention`, then the well-known names). */
  readonly retention: RetentionLookup;
  /** With a session folder: the outputs of tools that are not reproducible, saved as they arrive. */
  readonly outputs?: OutputSaver;
  /** Session time (ms since the epoch): timestamps, idle gaps. */
  readonly clock: () => number;
  /** Monotonic time (ms): durations and waits. */
  readonly timer: () => number;
  /** The levels of the current limits (re-read after a prompt-too-long error). */
  levels(): WindowLevels;
  /** The pinned messages, which no layer may clear, fold, snip or summarise. */
  readonly pins: Pins;
}

/** One `prepare`, `recover` or `compact` call as the ladder runs it. */
export interface LadderCall {
  readonly state: LadderState & { acted: Set<string> };
  readonly reports: LayerReport[];
  readonly options: PrepareOptions;
  /** The session time of the call (the time of its edits). */
  readonly now: number;
  /** The context's size when the call began. */
  readonly tokensBefore: number;
  /** Set when a summary applied in this call. */
  summarized: boolean;
  /** Summaries this call made but did not apply, and why (a manual compaction that changes nothing says so). */
  readonly declined: DeclinedCompaction[];
  /** Set on a manual compaction asked for as a preview: the first summary written is kept here, not applied. */
  preview?: CompactionPreview | "asked";
}

/** A call's state before any layer ran. */
export function startCall(
  core: ManagerCore,
  input: Pick<LadderState, "trigger" | "added" | "firstNew"> & {
    backgroundPending?: boolean;
    requested?: ReadonlyMap<string, LayerRequest>;
    options: PrepareOptions;
  },
): LadderCall {
  const levels = core.levels();
  const now = core.clock();
  const tokens = core.size.tokens();
  const last = core.view.view.findLast((message) => message.role === "assistant");
  const lastTime = last ? Date.parse(last.timestamp) : Number.NaN;
  return {
    state: {
      trigger: input.trigger,
      tokens,
      threshold: levels.threshold,
      blockingLimit: levels.blockingLimit,
      contextWindow: levels.contextWindow,
      added: input.added,
      firstNew: input.firstNew,
      idleMs: Number.isFinite(lastTime) ? Math.max(0, now - lastTime) : 0,
      batch: false,
      target: levels.threshold,
      minimumFreedTokens: 0,
      requested: input.requested ?? new Map(),
      acted: new Set(),
      backgroundPending: input.backgroundPending ?? false,
    },
    reports: [],
    options: input.options,
    now,
    tokensBefore: tokens,
    summarized: false,
    declined: [],
  };
}

/** The request a layer answers, when it was asked for by name (summary requests are answered by any summary layer). */
export function requestFor(call: LadderCall, layer: Layer): LayerRequest | undefined {
  return call.state.requested.get(layer.kind === "summary" ? SUMMARY_REQUEST : layer.name);
}

/** What a layer is given to run with. */
export function contextFor(core: ManagerCore, call: LadderCall, layer: Layer, reason: string): LayerContext {
  const request = requestFor(call, layer);
  const messages = core.view.view;
  // Computed when a layer asks (most calls, the budget looks at the new messages only and asks for neither).
  let newestTurn: NewestTurn | undefined;
  let stale: ReadonlySet<string> | undefined;
  return {
    ...call.state,
    trigger: request ? "manual" : call.state.trigger,
    reason,
    now: call.now,
    scale: scaleFor(call.state.threshold),
    ...(core.options.sessionDir ? { sessionDir: core.options.sessionDir } : {}),
    ...(core.outputs ? { persistOutput: core.outputs.persist } : {}),
    retention: core.retention,
    originalOutput: (toolUseId) => core.view.originalOutput(toolUseId),
    get staleMessageIds() {
      stale ??= core.view.staleMessageIds();
      return stale;
    },
    get newestTurn() {
      newestTurn ??= findNewestTurn(messages);
      return newestTurn;
    },
    ...(request ? { request } : {}),
    ...(call.options.signal ? { signal: call.options.signal } : {}),
  };
}

/**
 * Runs one edit layer: its edits are checked (none may remove the newest turn; the context may not grow),
 * replayed through the projection's code, recorded, and published. A throw or a bad result counts against
 * the layer's breaker, never against the session.
 */
export async function runEditLayer(
  core: ManagerCore,
  call: LadderCall,
  layer: EditLayer,
  reason: string,
): Promise<void> {
  const breaker = core.breakers.get(layer.name);
  if (!breaker.closed) return;
  const context = contextFor(core, call, layer, reason);
  const started = core.timer();
  const before = core.size.tokens();
  const current = core.view.view;
  let edits: ContextEdit[];
  let stats: Record<string, number>;
  try {
    const result = await layer.run(current, context);
    // Pinned messages stay as they are, whatever a layer proposes (the layer may not know them).
    const unpinned = withoutPinned(result.edits, core.pins.honoured());
    edits = layer.cutsNewestTurn
      ? unpinned
      : unpinned.filter((edit) => !touchesNewestTurn(edit, context.newestTurn));
    stats = result.stats;
  } catch (error) {
    core.breakers.fail(layer.name, context.trigger, error);
    return;
  }
  if (edits.length === 0) {
    breaker.success();
    return;
  }
  // The layer's edits, replayed by the code the projection uses: the live request and a resumed one agree.
  const messages = applyLayerEdits(
    current,
    edits.map((edit) => ({ edit, timestamp: isoTime(call.now) })),
  );
  const freed = estimateTokens(current) - estimateTokens(messages);
  if (freed <= 0) {
    core.breakers.fail(
      layer.name,
      context.trigger,
      new CompactionFailedError(
        layer.name,
        `The ${layer.name} layer's edits would not make the context smaller; they were not applied.`,
        { reason: "no-gain" },
      ),
    );
    return;
  }
  breaker.success();
  const anchored = core.size.anchored();
  core.view.applyLayer(layer.name, messages, edits, before, before - freed, reason);
  core.size.afterEdit(before, freed, anchored);
  core.cacheBreaks.resetBaseline();
  const after = core.size.tokens();
  call.state.tokens = after;
  call.state.acted.add(layer.name);
  await core.events.publish(call.reports, {
    layer: layer.name,
    trigger: context.trigger,
    tokensBefore: before,
    tokensAfter: after,
    tokensFreed: Math.max(0, before - after),
    durationMs: core.timer() - started,
    stats,
    reason,
  });
}

/** The summary stage, as the ladder runs it (see `createSummaryPipeline`). */
export interface SummaryStage {
  /** Tries the due summary layers in order until one applies; `fallback` runs the last one on the fallback summariser. */
  run(
    call: LadderCall,
    due: readonly { layer: SummaryLayer; reason: string }[],
    options?: { fallback?: boolean },
  ): Promise<void>;
}

/**
 * Runs the ladder once: each layer the policy says is due, in order (each at most once per call). The summary
 * layers form one stage where the first of them is due: tried in order until one applies.
 */
export async function runLadder(
  core: ManagerCore,
  stage: SummaryStage,
  call: LadderCall,
  due: (layer: Layer) => string | false,
): Promise<void> {
  let summariesTried = false;
  for (const layer of core.layers) {
    if (call.state.acted.has(layer.name)) continue;
    if (layer.kind === "edit") {
      const reason = due(layer);
      if (reason) await runEditLayer(core, call, layer, reason);
      continue;
    }
    if (summariesTried) continue;
    const dueSummaries = core.layers.flatMap((candidate) => {
      if (candidate.kind !== "summary") return [];
      const reason = due(candidate);
      return reason ? [{ layer: candidate, reason }] : [];
    });
    if (dueSummaries.length === 0) continue;
    summariesTried = true;
    await stage.run(call, dueSummaries);
  }
}
