import {
  type Attachment,
  type ContextManagementConfig,
  getModelLimits,
  type Message,
  type ModelLimits,
  PromptTooLongError,
  type RequestMessage,
} from "@unforget/core";
import type { PostCompactEvent } from "@unforget/hooks";
import {
  type Calibrator,
  type ContextPolicy,
  createCalibrator,
  createContextPolicy,
  DEFAULT_PADDING,
} from "@unforget/tokens";
import { applyLayerEdits, type CompactTrigger, type TranscriptEntry } from "@unforget/transcript";
import { type CacheBreakDetector, createCacheBreakDetector } from "./cache-break-detector.ts";
import { type CachedMicrocompact, type CacheEdit, createCachedMicrocompact } from "./cached-microcompact.ts";
import { type CircuitBreaker, createCircuitBreaker } from "./circuit-breaker.ts";
import { collapseContext } from "./collapse-context.ts";
import { type CompactionOutcome, compactConversation } from "./compact-conversation.ts";
import { CompactionDisabledError, CompactionFailedError } from "./compact-error.ts";
import type { ContextEvent, ContextEventListener, LayerName, LayerReport } from "./context-events.ts";
import type { ContextManagerOptions, PrepareOptions, ThresholdSetting } from "./context-manager-options.ts";
import { ContextView } from "./context-view.ts";
import { estimateTextTokens, estimateTokens } from "./conversation.ts";
import { createExtractiveSummarizer } from "./extractive-summarizer.ts";
import type { LayerResult } from "./layer-result.ts";
import { microcompact } from "./microcompact.ts";
import { createModelSummarizer } from "./model-summarizer.ts";
import { buildContextManagement, supportsNativeContext } from "./native-context.ts";
import { maskObservations } from "./observation-masking.ts";
import { type AttachmentProvider, POST_COMPACT_TOTAL_TOKENS } from "./rehydration.ts";
import { sessionMemoryCompact } from "./session-memory-compact.ts";
import { snipCompact } from "./snip-compact.ts";
import type { Summarizer } from "./summarizer.ts";
import { applyToolResultBudget } from "./tool-result-budget.ts";

/** A summary layer that leaves at least this share of the tokens has stalled (counts as a failure). */
export const STALL_FRACTION = 0.95;
/** A summary layer that leaves the context above this share of the threshold did not make enough room. */
export const THRASH_FRACTION = 0.5;
/**
 * Share of the threshold at which the cheap layers act — prune, masking, snip and collapse together, in one
 * call, so that the prompt cache is broken once for all of them.
 */
export const CHEAP_LEVEL = 0.95;
/** The cheap layers fold down to this share of the threshold, so that each cache break buys many calls. */
export const CHEAP_TARGET = 0.3;
/** A cheap layer acts only when it frees at least this share of the threshold (each act breaks the cache). */
export const CHEAP_MINIMUM_SHARE = 0.2;
/** Recent tool output that collapse never folds, as a share of the threshold (at least one round). */
export const COLLAPSE_PROTECT_SHARE = 0.05;
/**
 * Share of the threshold at which a summary starts in the background, when the cheaper layers could not
 * bring the context below it in the same call.
 */
export const DEFAULT_EARLY_MARK = 0.85;

export interface ContextStatus {
  /** Context size now, in tokens (usage-anchored where possible). */
  tokens: number;
  contextWindow: number;
  effectiveWindow: number;
  /** Size at which the summary paths fire. */
  threshold: number;
  percentUsed: number;
  /** Turns until the threshold at the recent rate of growth; undefined until the rate is known. */
  turnsUntilCompaction: number | undefined;
  /** Boundary compactions so far (summary, session memory, reactive, manual). */
  compactions: number;
  /** Compactions in a row that came within three turns of the previous one. */
  recompactionChain: number;
  /** Consecutive failures per layer (a layer at the breaker threshold is skipped). */
  failures: Partial<Record<LayerName, number>>;
}

export interface PrepareResult {
  /** The request's `messages`: projected, same-role neighbours merged, ready to send. */
  messages: RequestMessage[];
  /** The projected messages, with ids (what the transcript projects to). */
  projected: Message[];
  /** Context size before and after this call's layers. */
  tokensBefore: number;
  tokens: number;
  /** What each layer did, in order (empty when nothing fired). */
  actions: LayerReport[];
  /** Provider-side context management to put on the request, when a native strategy is on. */
  contextManagement?: ContextManagementConfig;
  /** Cache deletions to send (cached microcompact), when enabled. */
  cacheEdits?: CacheEdit[];
  status: ContextStatus;
}

export interface CompactOptions {
  /** Extra instructions for this compaction only (never carried across the boundary). */
  instructions?: string;
  /** A partial compaction: summarise before `upTo`, or from `from` on. */
  range?: { upTo: number } | { from: number };
}

/** The ladder, composed: call `prepare` before every model call and `recover` after a prompt-too-long error. */
export interface ContextManager {
  /**
   * Called before every model call with the whole conversation (the caller's list, only ever appended to).
   * Records new messages, runs the layers that are due (cheap first), and resolves to what to send. Each layer
   * runs at most once per call. Rejects with `CompactionDisabledError` only when proactive compaction is off and
   * the context is at the blocking limit.
   */
  prepare(messages: readonly Message[], options?: PrepareOptions): Promise<PrepareResult>;
  /**
   * Called after a request failed with a prompt-too-long error: drains collapse, then summarises all but the
   * last messages, once per turn. Resolves to what to send instead; rejects with the original error (the
   * transcript intact) when that is not possible, or with `CompactionDisabledError` when emergency compaction is off.
   */
  recover(error: unknown, options?: PrepareOptions): Promise<PrepareResult>;
  /**
   * A manual compaction now (the user's `/compact`) of the conversation (the same list `prepare` takes);
   * never fails for being too long to summarise. The instructions apply to this compaction only.
   */
  compact(messages: readonly Message[], options?: CompactOptions & PrepareOptions): Promise<PrepareResult>;
  /** Asks for a compaction before the next model call (the model-callable compact tool uses this). */
  requestCompaction(instructions?: string): void;
  /** Asks for a snip before the next model call, keeping the most recent messages (the snip tool uses this). */
  requestSnip(keepRecentMessages: number): void;
  /** Records session metadata (title, tags, app data); it is re-appended after every compaction. */
  recordMetadata(metadata: {
    title?: string;
    tags?: string[];
    data?: Record<string, unknown>;
  }): Promise<void>;
  /** The current context state; cheap. */
  status(): ContextStatus;
  /** Everything the manager has recorded, in order (also written to the transcript sink). */
  readonly entries: readonly TranscriptEntry[];
  /** Subscribes to events; returns the unsubscribe function. */
  on(listener: ContextEventListener): () => void;
}

interface Background {
  promise: Promise<CompactionOutcome | Error>;
  startedAt: number;
}

/**
 * Creates the manager of one session's context. See `ContextManagerOptions` for what it uses; with only a
 * model and limits it works offline (extractive summaries, no provider).
 */
export function createContextManager(options: ContextManagerOptions): ContextManager {
  const config = options.config ?? {};
  const clock = options.clock ?? Date.now;
  const calibrator: Calibrator = options.calibrator ?? createCalibrator();
  const calibrationKey = { providerId: options.provider?.providerId ?? "offline", model: options.model };
  const extractive = createExtractiveSummarizer();
  const summarizer: Summarizer =
    options.summarizer ??
    (options.provider
      ? createModelSummarizer({ provider: options.provider, model: options.model })
      : extractive);
  const fallbackSummarizer = options.fallbackSummarizer ?? extractive;
  const view = new ContextView({
    clock,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.transcript ? { sink: options.transcript } : {}),
    ...(options.idFactory ? { idFactory: options.idFactory } : {}),
    ...(options.resume ? { resume: options.resume } : {}),
  });
  const listeners = new Set<ContextEventListener>();
  if (options.onEvent) listeners.add(options.onEvent);
  const breakers = new Map<LayerName, CircuitBreaker>();
  const breaker = (layer: LayerName) => {
    let found = breakers.get(layer);
    if (!found) {
      found = createCircuitBreaker(config.breakerThreshold);
      breakers.set(layer, found);
    }
    return found;
  };
  const cacheBreaks: CacheBreakDetector = createCacheBreakDetector();
  const cached: CachedMicrocompact | undefined =
    config.cachedMicrocompact && options.provider?.capabilities.cacheEdits
      ? createCachedMicrocompact(config.cachedMicrocompact)
      : undefined;

  let limits = resolveLimits();
  let policy = buildPolicy(limits);
  // After a layer edits messages that a response's usage already counted, that usage is stale: the count
  // continues from the size the layer left (real tokens) plus the estimate of what is added, until the next
  // response reports fresh usage.
  let manualAnchor: { tokens: number; extra: number } | undefined;
  // What the previous request was estimated at: the anchored part the provider already counted, and the
  // unpadded estimate of the rest. The next response's usage tells how far the estimate of the rest was off.
  let lastRequest: { anchored: number; estimated: number } | undefined;
  let background: Background | undefined;
  let reactiveUsed = false;
  let pendingCompaction: { instructions?: string } | undefined;
  let pendingSnip: number | undefined;
  let compactions = 0;
  let chain = 0;
  let turnsSinceCompaction = Number.POSITIVE_INFINITY;
  let lastTokensAfter: number | undefined;
  const growth: number[] = [];
  // Every tool the session's requests offered, recorded on each boundary so deferred tool lists survive it.
  const discoveredTools = new Set<string>();
  let lastSystem: unknown;
  let lastTools: unknown;
  let cacheSafe: { system?: PrepareOptions["system"]; tools?: PrepareOptions["tools"]; maxTokens?: number } =
    {};

  function resolveLimits(): Pick<ModelLimits, "contextWindow" | "maxOutputTokens"> {
    return options.limits ?? options.provider?.getModelLimits(options.model) ?? getModelLimits(options.model);
  }

  function buildPolicy(current: Pick<ModelLimits, "contextWindow" | "maxOutputTokens">): ContextPolicy & {
    threshold: number;
  } {
    const setting: ThresholdSetting | undefined = config.thresholds?.[options.model] ?? config.threshold;
    const base = createContextPolicy(current, {
      env: {},
      ...(setting && "percent" in setting ? { autoCompactPercent: setting.percent } : {}),
    });
    const baseThreshold = base.evaluate(0).autoCompactThreshold;
    const threshold =
      setting && "tokens" in setting ? Math.min(baseThreshold, Math.max(1, setting.tokens)) : baseThreshold;
    return Object.assign(Object.create(base) as ContextPolicy, base, { threshold });
  }

  const emit = (event: ContextEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener must not break the session.
      }
    }
  };

  /** Context size now: the last usage (or the size a layer left) plus the calibrated estimate of what came after. */
  const tokensNow = () => {
    if (manualAnchor) return manualAnchor.tokens + manualAnchor.extra;
    const count = view.count();
    return Math.max(0, count.anchorTokens + calibrator.correct(calibrationKey, count.estimatedTokens));
  };

  const rehydrationBudget = () =>
    Math.min(POST_COMPACT_TOTAL_TOKENS, Math.floor(policy.threshold * (config.rehydrationShare ?? 0.25)));
  const summaryBudget = () =>
    config.summary?.maxTokens ?? Math.max(500, Math.min(20_000, Math.floor(policy.threshold * 0.15)));
  /** What a model summary may read: the window less the summary's output and the compaction prompt. */
  const summaryInputLimit = () => Math.max(1_000, limits.contextWindow - summaryBudget() - 4_000);
  const keepScale = () => Math.min(1, policy.threshold / 167_000);

  /** Runs one cheap layer; its edits are recorded and the view replaced. Errors open its breaker, never the session. */
  async function runLayer(
    layer: LayerName,
    trigger: CompactTrigger,
    reason: string,
    reports: LayerReport[],
    run: () => LayerResult | Promise<LayerResult>,
  ): Promise<void> {
    const gate = breaker(layer);
    if (!gate.closed) return;
    const started = clock();
    const tokensBefore = tokensNow();
    let result: LayerResult;
    try {
      result = await run();
    } catch (error) {
      fail(layer, trigger, error);
      return;
    }
    gate.success();
    if (result.edits.length === 0) return;
    view.applyLayer(
      layer,
      result.messages,
      result.edits,
      tokensBefore,
      tokensBefore - result.tokensFreed,
      reason,
    );
    manualAnchor = {
      tokens: Math.max(0, tokensBefore - calibrator.correct(calibrationKey, result.tokensFreed)),
      extra: 0,
    };
    const tokensAfter = tokensNow();
    const report: LayerReport = {
      layer,
      trigger,
      tokensBefore,
      tokensAfter,
      tokensFreed: Math.max(0, tokensBefore - tokensAfter),
      durationMs: clock() - started,
      stats: result.stats,
      reason,
    };
    await publish(reports, report);
  }

  function fail(layer: LayerName, trigger: CompactTrigger, error: unknown): void {
    const gate = breaker(layer);
    const tripped = gate.failure();
    emit({
      type: "layer-failed",
      layer,
      trigger,
      error: error instanceof Error ? error.message : String(error),
      consecutiveFailures: gate.consecutiveFailures,
    });
    if (tripped) emit({ type: "breaker-open", layer, consecutiveFailures: gate.consecutiveFailures });
  }

  /** A layer acted: it goes into this call's reports, the event stream and the PostCompact observers. */
  async function publish(reports: LayerReport[], report: LayerReport, summary?: string): Promise<void> {
    reports.push(report);
    emit({ type: "layer", ...report });
    await firePostCompact(report, summary);
  }

  async function firePostCompact(report: LayerReport, summary?: string): Promise<void> {
    if (!options.hooks) return;
    const event: PostCompactEvent = {
      sessionId: options.sessionId ?? "",
      trigger: report.trigger,
      layer: report.layer,
      tokensBefore: report.tokensBefore,
      tokensAfter: report.tokensAfter,
    };
    if (options.transcript?.path) event.transcriptId = options.transcript.path;
    if (summary !== undefined) event.summary = summary;
    if (report.messagesSummarized !== undefined) event.messagesSummarized = report.messagesSummarized;
    await options.hooks.postCompact.promise(event);
  }

  /** PreCompact: the user's instructions first, each plugin's appended; a veto stops a manual or auto compaction. */
  async function firePreCompact(
    trigger: CompactTrigger,
    tokens: number,
    userInstructions: string | undefined,
  ): Promise<{ instructions: string; vetoed?: { by: string; reason: string } }> {
    if (!options.hooks) return { instructions: userInstructions ?? "" };
    const result = await options.hooks.preCompact.promise(
      { instructions: userInstructions ?? "" },
      { sessionId: options.sessionId ?? "", trigger, tokens, threshold: policy.threshold },
    );
    if (result.veto && trigger !== "reactive") {
      return {
        instructions: result.instructions,
        vetoed: { by: result.veto.by ?? "a plugin", reason: result.veto.reason },
      };
    }
    return { instructions: result.instructions };
  }

  async function rehydrate(
    trigger: CompactTrigger,
    summarized: readonly Message[],
    kept: readonly Message[],
  ): Promise<Attachment[]> {
    const providers: readonly AttachmentProvider[] = options.attachments ?? [];
    const total = rehydrationBudget();
    const attachments: Attachment[] = [];
    let used = 0;
    for (const provider of providers) {
      const share = provider.budgetShare ?? 1 / Math.max(1, providers.length);
      const budgetTokens = Math.max(0, Math.min(total - used, Math.floor(total * share)));
      if (budgetTokens <= 0) continue;
      try {
        const added = await provider.provide({ trigger, summarized, kept, budgetTokens });
        for (const attachment of added) {
          attachments.push(
            attachment.source === undefined ? { ...attachment, source: provider.name } : attachment,
          );
          used += estimateAttachment(attachment);
        }
      } catch (error) {
        emit({
          type: "layer-failed",
          layer: "full",
          trigger,
          error: `Attachment provider ${provider.name}: ${error instanceof Error ? error.message : String(error)}`,
          consecutiveFailures: 0,
        });
      }
    }
    if (options.hooks) {
      const fromHooks = await options.hooks.sessionStart.promise([], {
        sessionId: options.sessionId ?? "",
        source: "compact",
      });
      attachments.push(...fromHooks);
    }
    return attachments;
  }

  /**
   * Applies a boundary compaction if it helps: never when it would not shrink the context or leaves ≥ 95 % of
   * it (a stall); a result above half the threshold is applied but counts as a failure (the thrash guard).
   */
  async function applyOutcome(
    layer: LayerName,
    trigger: CompactTrigger,
    outcome: CompactionOutcome,
    tokensBefore: number,
    started: number,
    reports: LayerReport[],
  ): Promise<boolean> {
    const byId = new Map(view.view.map((message) => [message.id, message]));
    const summarized = outcome.summarizedMessageIds.flatMap((id) => byId.get(id) ?? []);
    const kept = outcome.keptMessageIds.flatMap((id) => byId.get(id) ?? []);
    const attachments = await rehydrate(trigger, summarized, kept);
    const projectedAfter =
      outcome.tokensAfter + attachments.reduce((sum, attachment) => sum + estimateAttachment(attachment), 0);
    const estimatedBefore = estimateTokens(view.view);
    if (projectedAfter >= estimatedBefore * STALL_FRACTION) {
      fail(
        layer,
        trigger,
        new CompactionFailedError(
          layer,
          `The ${layer} compaction would leave ${projectedAfter} of ${estimatedBefore} estimated tokens; not applied.`,
        ),
      );
      return false;
    }
    if (outcome.mode === "replace") {
      const replacement = {
        id: `${layer}_${summarized[0]?.id ?? "summary"}`,
        role: "user" as const,
        text: outcome.messageText,
      };
      const edits = [
        {
          kind: "replace_messages" as const,
          messageIds: outcome.summarizedMessageIds,
          details: { replacement, reason: layer },
        },
      ];
      const messages = applyLayerEdits(view.view, [
        { edit: edits[0]!, timestamp: new Date(clock()).toISOString() },
      ]);
      view.applyLayer(layer, messages, edits, tokensBefore, projectedAfter, `partial ${trigger} compaction`);
      view.appendAttachments(attachments);
    } else {
      view.applyBoundary({
        trigger,
        layer,
        summaryText: outcome.messageText,
        keptMessageIds: outcome.keptMessageIds,
        messagesSummarized: outcome.summarizedMessageIds.length,
        tokensBefore,
        tokensAfter: projectedAfter,
        attachments,
        discoveredTools: [...discoveredTools],
      });
    }
    manualAnchor = undefined;
    background = undefined;
    cached?.reset();
    cacheBreaks.resetBaseline();
    compactions++;
    chain = turnsSinceCompaction <= 3 ? chain + 1 : 1;
    turnsSinceCompaction = 0;
    const tokensAfter = tokensNow();
    // What no compaction can remove: the system prompt and tools, the summary, the last round, the attachments.
    const irreducible =
      view.preambleTokens +
      estimateTextTokens(outcome.messageText) +
      estimateTokens(kept.slice(-4)) +
      attachments.reduce((sum, attachment) => sum + estimateAttachment(attachment), 0);
    if (
      tokensAfter > policy.threshold * THRASH_FRACTION &&
      tokensAfter > irreducible * DEFAULT_PADDING * 1.1 &&
      trigger !== "manual"
    ) {
      fail(
        layer,
        trigger,
        new CompactionFailedError(
          layer,
          `The ${layer} compaction left ${tokensAfter} tokens, above half the threshold (${policy.threshold}).`,
        ),
      );
    } else {
      breaker(layer).success();
    }
    const report: LayerReport = {
      layer,
      trigger,
      tokensBefore,
      tokensAfter,
      tokensFreed: Math.max(0, tokensBefore - tokensAfter),
      durationMs: clock() - started,
      stats: {
        summarizerCalls: outcome.summarizer.calls,
        summarizerInputTokens: outcome.summarizer.inputTokens,
        summarizerOutputTokens: outcome.summarizer.outputTokens,
        kept: outcome.keptMessageIds.length,
        attachments: attachments.length,
        ptlRetries: outcome.ptlRetries,
        droppedRounds: outcome.droppedRounds,
        recompactionChain: chain,
      },
      summarizer: outcome.summarizer.name,
      messagesSummarized: outcome.summarizedMessageIds.length,
      reason:
        trigger === "manual"
          ? "manual compaction"
          : trigger === "reactive"
            ? "the provider said the prompt was too long"
            : `context at ${tokensBefore} tokens, threshold ${policy.threshold}`,
    };
    await publish(reports, report, outcome.summary);
    return true;
  }

  /** The summary paths: background result, session notes, then a summary (the fallback summariser when the breaker is open). */
  async function summarize(
    trigger: CompactTrigger,
    tokensBefore: number,
    reports: LayerReport[],
    prepareOptions: PrepareOptions,
    manual?: { instructions?: string; range?: CompactOptions["range"] },
  ): Promise<boolean> {
    const started = clock();
    const pre = await firePreCompact(trigger, tokensBefore, manual?.instructions);
    if (pre.vetoed) {
      emit({ type: "vetoed", layer: "full", by: pre.vetoed.by, reason: pre.vetoed.reason });
      return false;
    }
    const layerFor: LayerName = trigger === "reactive" ? "reactive" : "full";
    if (trigger === "auto" && background) {
      const waitStart = clock();
      const result = await background.promise;
      const waitedMs = clock() - waitStart;
      background = undefined;
      if (!(result instanceof Error)) {
        const adjusted = rebaseBackground(result);
        if (adjusted && (await applyOutcome("full", trigger, adjusted, tokensBefore, started, reports))) {
          emit({
            type: "background-applied",
            waitedMs,
            messagesSummarized: adjusted.summarizedMessageIds.length,
          });
          return true;
        }
        emit({
          type: "background-discarded",
          reason: adjusted ? "it would not have made enough room" : "the conversation changed under it",
        });
      } else {
        emit({ type: "background-discarded", reason: result.message });
      }
    }
    const floor = 0;
    if (
      trigger !== "reactive" &&
      !manual?.range &&
      options.sessionMemory &&
      config.sessionMemoryCompact !== false &&
      breaker("session-memory").closed
    ) {
      try {
        const scale = keepScale();
        const outcome = await sessionMemoryCompact(view.view, {
          source: options.sessionMemory,
          threshold: policy.threshold,
          floor,
          continuation: trigger === "manual" ? "none" : (config.continuation ?? "interactive"),
          reservedTokens: rehydrationBudget(),
          keep: {
            minTokens: Math.round(10_000 * scale),
            maxTokens: Math.max(2_000, Math.round(40_000 * scale)),
            minTextMessages: 5,
            ...(config.sessionMemoryCompact ? config.sessionMemoryCompact.keep : {}),
          },
        });
        if (
          outcome &&
          (await applyOutcome("session-memory", trigger, outcome, tokensBefore, started, reports))
        )
          return true;
      } catch (error) {
        fail("session-memory", trigger, error);
      }
    }
    const primaryOpen = breaker(layerFor).closed;
    const chosen = primaryOpen ? summarizer : fallbackSummarizer;
    const scale = keepScale();
    const instructions = pre.instructions.trim().length > 0 ? pre.instructions : undefined;
    try {
      const outcome = await compactConversation(view.view, {
        summarizer: chosen,
        ...(chosen.boundedByModelWindow ? { maxInputTokens: summaryInputLimit() } : {}),
        trigger,
        summaryMaxTokens: summaryBudget(),
        continuation: trigger === "manual" ? "none" : (config.continuation ?? "interactive"),
        keep: {
          minTokens: 0,
          maxTokens: Math.max(600, Math.round(8_000 * scale)),
          minTextMessages: 1,
          ...config.summary?.keep,
        },
        now: clock(),
        ...(instructions ? { instructions } : {}),
        ...(manual?.range ? { range: manual.range } : {}),
        ...(options.transcript?.path ? { transcriptPath: options.transcript.path } : {}),
        ...(prepareOptions.signal ? { signal: prepareOptions.signal } : {}),
        cacheSafe,
        onKeepAlive: () => emit({ type: "keep-alive", layer: layerFor }),
      });
      return await applyOutcome(layerFor, trigger, outcome, tokensBefore, started, reports);
    } catch (error) {
      if (error instanceof CompactionFailedError && error.reason === "nothing-to-summarize") {
        if (trigger === "manual") throw error;
        return false;
      }
      fail(layerFor, trigger, error);
      if (chosen !== fallbackSummarizer && !breaker(layerFor).closed) {
        // The model path just tripped its breaker: the extractive summary is the fallback, now.
        return summarize(trigger, tokensBefore, reports, prepareOptions, manual);
      }
      if (trigger === "manual") throw error;
      return false;
    }
  }

  /**
   * A background summary covers a prefix of the view as it was; it still applies when that prefix is unchanged.
   * Everything after it is kept.
   */
  function rebaseBackground(outcome: CompactionOutcome): CompactionOutcome | undefined {
    const ids = outcome.summarizedMessageIds;
    for (let index = 0; index < ids.length; index++) {
      if (view.view[index]?.id !== ids[index]) return undefined;
    }
    const kept = view.view.slice(ids.length);
    const tokensAfter = estimateTextTokens(outcome.messageText) + estimateTokens(kept);
    if (tokensAfter >= policy.threshold * 0.9) return undefined;
    return { ...outcome, keptMessageIds: kept.map((message) => message.id), tokensAfter };
  }

  function startBackground(tokens: number): void {
    if (options.sessionMemory && config.sessionMemoryCompact !== false) {
      options.sessionMemory.requestUpdate?.("early-mark");
      return;
    }
    if (!breaker("full").closed) return;
    const snapshot = [...view.view];
    const scale = keepScale();
    const promise = compactConversation(snapshot, {
      summarizer,
      ...(summarizer.boundedByModelWindow ? { maxInputTokens: summaryInputLimit() } : {}),
      trigger: "auto",
      summaryMaxTokens: summaryBudget(),
      continuation: config.continuation ?? "interactive",
      keep: {
        minTokens: 0,
        maxTokens: Math.max(600, Math.round(8_000 * scale)),
        minTextMessages: 1,
        ...config.summary?.keep,
      },
      now: clock(),
      cacheSafe,
      ...(options.transcript?.path ? { transcriptPath: options.transcript.path } : {}),
    }).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    background = { promise, startedAt: clock() };
    emit({ type: "background-started", messages: snapshot.length, tokens });
  }

  /**
   * The cheap layers, all in one call (one cache break): prune old outputs, mask, snip, then fold old
   * completed runs down to the cheap target. Each stops as soon as the context is low enough.
   */
  async function runCheapLayers(reports: LayerReport[], now: number): Promise<void> {
    const target = Math.floor(policy.threshold * (config.cheapLayers?.target ?? CHEAP_TARGET));
    const minimumShare = config.cheapLayers?.minimumFreedShare ?? CHEAP_MINIMUM_SHARE;
    const scale = keepScale();
    if (config.microcompact !== false) {
      await runLayer("microcompact", "auto", "context at the cheap-layer level", reports, () =>
        microcompact(view.view, {
          protectTokens: Math.round(40_000 * scale),
          minimumFreedTokens: Math.round(20_000 * scale),
          ...config.microcompact,
          strategy: "prune",
          now,
          staleMessageIds: view.staleMessageIds(),
        }),
      );
    }
    if (config.observationMasking && tokensNow() > target) {
      await runLayer("observation-masking", "auto", "context at the cheap-layer level", reports, () =>
        maskObservations(view.view, {
          minimumFreedTokens: Math.floor(policy.threshold * minimumShare),
          ...(config.observationMasking || {}),
          now,
        }),
      );
    }
    if (config.snip && tokensNow() > target) {
      await runLayer("snip", "auto", "context at the cheap-layer level", reports, () =>
        snipCompact(view.view, { maxTokens: target, ...(config.snip || {}), now }),
      );
    }
    if (config.collapse !== false && tokensNow() > target) {
      // The estimate of the messages alone, without system prompt and padding, is what collapse can fold.
      const padded = tokensNow();
      const messagesTarget = Math.max(0, estimateTokens(view.view) - (padded - target) / DEFAULT_PADDING);
      await runLayer("collapse", "auto", "context at the cheap-layer level", reports, () =>
        collapseContext(view.view, {
          protectRounds: 2,
          protectTokens: Math.floor(
            policy.threshold * (config.cheapLayers?.protectShare ?? COLLAPSE_PROTECT_SHARE),
          ),
          minimumFreedTokens: Math.floor(policy.threshold * minimumShare),
          ...(config.collapse || {}),
          targetTokens: Math.floor(messagesTarget),
          now,
        }),
      );
    }
  }

  function setRequestShape(prepareOptions: PrepareOptions): void {
    for (const tool of prepareOptions.tools ?? []) discoveredTools.add(tool.name);
    if (prepareOptions.system !== lastSystem || prepareOptions.tools !== lastTools) {
      lastSystem = prepareOptions.system;
      lastTools = prepareOptions.tools;
      const systemText =
        typeof prepareOptions.system === "string"
          ? prepareOptions.system
          : (prepareOptions.system ?? []).map((block) => block.text).join("\n");
      const toolText = prepareOptions.tools ? JSON.stringify(prepareOptions.tools) : "";
      view.setPreambleTokens(estimateTextTokens(systemText) + (toolText ? estimateTextTokens(toolText) : 0));
    }
    cacheSafe = {};
    if (prepareOptions.system !== undefined) cacheSafe.system = prepareOptions.system;
    if (prepareOptions.tools !== undefined) cacheSafe.tools = prepareOptions.tools;
    if (prepareOptions.maxTokens !== undefined) cacheSafe.maxTokens = prepareOptions.maxTokens;
  }

  /** New assistant responses carry usage: feed the calibrator, the cache-break detector and cached microcompact. */
  function observeResponses(added: readonly Message[]): void {
    if (manualAnchor) {
      if (added.some((message) => message.role === "assistant" && message.usage)) manualAnchor = undefined;
      else
        manualAnchor.extra += calibrator.correct(
          calibrationKey,
          Math.ceil(estimateTokens(added) * DEFAULT_PADDING),
        );
    }
    for (const message of added) {
      if (message.role !== "assistant" || !message.usage) continue;
      const usage = message.usage;
      if (lastRequest !== undefined) {
        const reported = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
        if (reported > lastRequest.anchored) {
          calibrator.observe(calibrationKey, lastRequest.estimated, reported - lastRequest.anchored);
        }
        lastRequest = undefined;
      }
      const broke = cacheBreaks.observe(usage);
      if (broke) emit({ type: "cache-break", ...broke });
      cached?.observeUsage(usage);
    }
  }

  function status(tokens = tokensNow()): ContextStatus {
    const state = policy.evaluate(tokens);
    const failures: Partial<Record<LayerName, number>> = {};
    for (const [layer, gate] of breakers)
      if (gate.consecutiveFailures > 0) failures[layer] = gate.consecutiveFailures;
    const rate =
      growth.length >= 2 ? growth.reduce((sum, value) => sum + value, 0) / growth.length : undefined;
    return {
      tokens,
      contextWindow: limits.contextWindow,
      effectiveWindow: state.effectiveWindow,
      threshold: policy.threshold,
      percentUsed: state.percentUsed,
      turnsUntilCompaction:
        rate === undefined || rate <= 0
          ? undefined
          : Math.max(0, Math.ceil((policy.threshold - tokens) / rate)),
      compactions,
      recompactionChain: chain,
      failures,
    };
  }

  async function finish(
    tokensBefore: number,
    reports: LayerReport[],
    prepareOptions: PrepareOptions,
  ): Promise<PrepareResult> {
    const tokens = tokensNow();
    const result: PrepareResult = {
      messages: view.requestMessages(),
      projected: view.view,
      tokensBefore,
      tokens,
      actions: reports,
      status: status(tokens),
    };
    if (config.native && config.native.mode !== "off" && supportsNativeContext(options.provider)) {
      const last = [...view.view].reverse().find((message) => message.role === "assistant");
      const management = buildContextManagement(config.native, {
        idleMs: last ? clock() - Date.parse(last.timestamp) : 0,
        contextWindow: limits.contextWindow,
        hasThinking: view.view.some((message) => message.content.some((block) => block.type === "thinking")),
      });
      if (management) result.contextManagement = management;
    }
    if (cached && prepareOptions.querySource !== "compact") {
      const plan = cached.plan(view.view);
      if (plan.pinned.length > 0) result.cacheEdits = plan.pinned;
      if (plan.added.length > 0) {
        emit({
          type: "layer",
          layer: "cached-microcompact",
          trigger: "auto",
          tokensBefore: tokens,
          tokensAfter: tokens,
          tokensFreed: 0,
          durationMs: 0,
          stats: { deleted: plan.added.length },
          reason: "cache edits queued",
        });
      }
    }
    const count = view.count();
    lastRequest = manualAnchor
      ? undefined
      : count.anchorIndex >= 0
        ? { anchored: count.anchorTokens, estimated: count.estimatedTokens / DEFAULT_PADDING }
        : {
            anchored: 0,
            estimated: (count.estimatedTokens - view.preambleTokens) / DEFAULT_PADDING + view.preambleTokens,
          };
    lastTokensAfter = tokens;
    await view.flush();
    return result;
  }

  const manager: ContextManager = {
    async prepare(messages, prepareOptions = {}) {
      const added = view.sync(messages);
      setRequestShape(prepareOptions);
      if (added.some((message) => message.role === "user" && !message.isMeta)) {
        reactiveUsed = false;
        turnsSinceCompaction++;
      }
      observeResponses(added);
      const reports: LayerReport[] = [];
      const tokensBefore = tokensNow();
      if (lastTokensAfter !== undefined && added.length > 0) {
        growth.push(tokensBefore - lastTokensAfter);
        if (growth.length > 5) growth.shift();
      }
      const firstNew = view.view.length - added.length;
      const now = clock();
      const recursion =
        prepareOptions.querySource === "compact" || prepareOptions.querySource === "session_memory";
      // A compaction's or a memory extraction's own call never compacts (it would recurse or deadlock).
      if (recursion) return finish(tokensBefore, reports, prepareOptions);

      if (config.toolResultBudget !== false && added.length > 0) {
        const budget = config.toolResultBudget ?? {};
        const maxResultChars =
          budget.maxResultChars ?? Math.max(2_000, Math.min(50_000, Math.floor(policy.threshold * 0.15 * 4)));
        await runLayer("tool-result-budget", "auto", "large tool output", reports, () =>
          applyToolResultBudget(view.view, {
            ...budget,
            maxResultChars,
            previewChars: Math.min(budget.previewChars ?? 2_000, Math.floor(maxResultChars / 2)),
            fromIndex: firstNew,
            now,
            ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
          }),
        );
      }
      if (config.microcompact !== false) {
        await runLayer("microcompact", "auto", "idle longer than the prompt cache lives", reports, () =>
          microcompact(view.view, {
            ...config.microcompact,
            strategy: "time",
            now,
            staleMessageIds: view.staleMessageIds(),
          }),
        );
      }
      if (pendingSnip !== undefined) {
        const keep = pendingSnip;
        pendingSnip = undefined;
        await runLayer("snip", "manual", "the model asked for a snip", reports, () =>
          snipCompact(view.view, { maxMessages: keep + 1, keepHead: 1, keepTail: keep, now }),
        );
      }
      if (pendingCompaction) {
        const request = pendingCompaction;
        pendingCompaction = undefined;
        await summarize(
          "manual",
          tokensNow(),
          reports,
          prepareOptions,
          request.instructions ? { instructions: request.instructions } : {},
        );
      }
      const proactive = config.proactive !== "off" && !recursion;
      if (proactive) {
        let tokens = tokensNow();
        const actedBefore = reports.length;
        if (tokens >= policy.threshold * (config.cheapLayers?.level ?? CHEAP_LEVEL))
          await runCheapLayers(reports, now);
        tokens = tokensNow();
        const cheaperActed = reports.length > actedBefore;
        const earlyMark = config.earlyMark === false ? undefined : (config.earlyMark ?? DEFAULT_EARLY_MARK);
        if (
          earlyMark !== undefined &&
          !background &&
          !cheaperActed &&
          tokens >= policy.threshold * earlyMark &&
          tokens < policy.threshold
        ) {
          startBackground(tokens);
        }
        if (tokens >= policy.threshold) await summarize("auto", tokens, reports, prepareOptions);
      } else if (!recursion && config.proactive === "off") {
        const tokens = tokensNow();
        if (policy.evaluate(tokens).atBlockingLimit) {
          await view.flush();
          throw new CompactionDisabledError(
            "proactive",
            tokens,
            `The context is at ${tokens} tokens, at the blocking limit of this model's window, and proactive compaction is off (config.proactive = "off"), so the request was not sent. Compact by hand (compact()), turn proactive compaction on, or start a new session; nothing has been lost.`,
          );
        }
      }
      return finish(tokensBefore, reports, prepareOptions);
    },

    async recover(error, prepareOptions = {}) {
      if (!(error instanceof PromptTooLongError)) throw error;
      if (config.emergency === "off") {
        throw new CompactionDisabledError(
          "emergency",
          tokensNow(),
          `The provider refused the request as too long and emergency compaction is off (config.emergency = "off"), so nothing was compacted. Compact by hand (compact()) or turn emergency compaction on; the transcript is intact.`,
          { cause: error },
        );
      }
      if (reactiveUsed) throw error;
      reactiveUsed = true;
      limits = resolveLimits();
      policy = buildPolicy(limits);
      const reports: LayerReport[] = [];
      const tokensBefore = tokensNow();
      if (config.collapse !== false) {
        await runLayer("collapse", "reactive", "drain before the reactive summary", reports, () =>
          collapseContext(view.view, { ...(config.collapse || {}), drain: true, now: clock() }),
        );
      }
      // The drain is enough when it removed the share the provider said was too much, plus a margin.
      const tooMuch =
        error.actualTokens !== undefined && error.limitTokens !== undefined && error.actualTokens > 0
          ? Math.max(0, 1 - error.limitTokens / error.actualTokens)
          : undefined;
      const drained = tooMuch !== undefined && tokensNow() <= tokensBefore * (1 - tooMuch - 0.1);
      if (!drained) {
        const keepFrom = Math.max(0, view.view.length - 5);
        await summarize("reactive", tokensBefore, reports, prepareOptions, { range: { upTo: keepFrom } });
      }
      if (reports.length === 0) throw error;
      return finish(tokensBefore, reports, prepareOptions);
    },

    async compact(messages, compactOptions = {}) {
      observeResponses(view.sync(messages));
      setRequestShape(compactOptions);
      const reports: LayerReport[] = [];
      const tokensBefore = tokensNow();
      const manual: { instructions?: string; range?: CompactOptions["range"] } = {};
      if (compactOptions.instructions) manual.instructions = compactOptions.instructions;
      if (compactOptions.range) manual.range = compactOptions.range;
      await summarize("manual", tokensBefore, reports, compactOptions, manual);
      return finish(tokensBefore, reports, compactOptions);
    },

    requestCompaction(instructions) {
      pendingCompaction = instructions ? { instructions } : {};
    },

    requestSnip(keepRecentMessages) {
      pendingSnip = Math.max(1, Math.floor(keepRecentMessages));
    },

    async recordMetadata(metadata) {
      view.appendMetadata(metadata);
      await view.flush();
    },

    status: () => status(),

    get entries() {
      return view.entries;
    },

    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return manager;
}

function estimateAttachment(attachment: Attachment): number {
  return typeof attachment.content === "string"
    ? estimateTextTokens(attachment.content)
    : estimateTokens([{ id: "", role: "user", content: attachment.content, timestamp: "" }]);
}
