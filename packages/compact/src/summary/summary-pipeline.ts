import type { Message } from "@unforget/core";
import { DEFAULT_PADDING } from "@unforget/tokens";
import type { CompactTrigger } from "@unforget/transcript";
import { CompactionFailedError } from "../compact-error.ts";
import { estimateTextTokens, estimateTokens } from "../conversation/conversation.ts";
import { keepPinned } from "../conversation/pinned.ts";
import {
  ATTACHMENT_SHARE_OF_FREED,
  BACKGROUND_MINIMUM_SHARE,
  COMPACT_PROMPT_TOKENS,
  IRREDUCIBLE_MARGIN,
  SUMMARY_MAX_TOKENS,
  SUMMARY_MIN_INPUT_TOKENS,
  SUMMARY_MIN_TOKENS,
  SUMMARY_SHARE,
  THRASH_FRACTION,
} from "../defaults.ts";
import type { SummaryLayer, SummaryLayerContext } from "../layers/layer.ts";
import type { SummaryFallback } from "../manager/context-events.ts";
import {
  contextFor,
  type LadderCall,
  type ManagerCore,
  requestFor,
  type SummaryStage,
} from "../manager/ladder.ts";
import type { CompactionOutcome } from "./compaction-outcome.ts";
import { compactedSessionStart, estimateAttachment } from "./rehydration.ts";
import type { Summarizer } from "./summarizer.ts";
import {
  newestTurnDropped,
  previewView,
  record,
  rehydrationBudget,
  restore,
  splice,
  summaryReport,
  unhelpfulReason,
} from "./summary-outcome.ts";

/** The summary part of the manager: PreCompact, background summaries, session notes, model, fallback, guards. */
export interface SummaryPipeline extends SummaryStage {
  /** Called at the early mark: starts the background summary (or asks the session-memory layer for fresh notes). */
  startBackground(call: LadderCall): Promise<void>;
  /** Splices a finished background summary in now (the cheap layers broke the cache anyway); true when it applied. */
  spliceIfReady(call: LadderCall): Promise<boolean>;
  /** True while a background summary runs or waits to be spliced in. */
  readonly backgroundPending: boolean;
}

interface Background {
  layer: SummaryLayer;
  promise: Promise<CompactionOutcome | Error | undefined>;
  settled: boolean;
}

/** What a summary stage decided about PreCompact. */
interface Clearance {
  instructions?: string;
}

/**
 * The summary stage: at the threshold a finished background summary is spliced in first (waiting for it
 * if it still runs); otherwise PreCompact is asked, then each due summary layer in order — session notes,
 * then the summariser (its fallback while its breaker is open) — until one applies. `onCompaction` is told
 * of each boundary compaction and returns the recompaction chain.
 */
/** The pipeline's state: the manager's core and the background summary in flight. */
interface Pipeline {
  readonly core: ManagerCore;
  /** Told of each boundary compaction; returns the recompaction chain. */
  readonly onCompaction: () => number;
  background: Background | undefined;
}

export function createSummaryPipeline(core: ManagerCore, onCompaction: () => number): SummaryPipeline {
  const p: Pipeline = { core, onCompaction, background: undefined };
  return {
    run: (call, due, options) => run(p, call, due, options),
    startBackground: (call) => startBackground(p, call),
    async spliceIfReady(call) {
      const pending = p.background;
      if (!pending?.settled) return false;
      // Only when it fits and frees enough now (as much as a cheap layer must, and at least what it must free
      // at the threshold); otherwise it waits for the threshold.
      const result = await pending.promise;
      if (!result || result instanceof Error) return false;
      const minimum = Math.max(
        call.state.minimumFreedTokens,
        call.state.threshold * BACKGROUND_MINIMUM_SHARE,
      );
      if (typeof splice(p.core, result, minimum, call.state.threshold) !== "object") return false;
      return applyBackground(
        p,
        call,
        core.timer(),
        "background summary ready while the cheap layers broke the cache",
      );
    },
    get backgroundPending() {
      return p.background !== undefined;
    },
  };
}

const summaryMaxTokens = (config: ManagerCore["config"], threshold: number) =>
  config.summary?.maxTokens ??
  Math.max(SUMMARY_MIN_TOKENS, Math.min(SUMMARY_MAX_TOKENS, Math.floor(threshold * SUMMARY_SHARE)));

function summaryContext(
  p: Pipeline,
  call: LadderCall,
  layer: SummaryLayer,
  reason: string,
  summarizer: Summarizer,
  clearance: Clearance,
): SummaryLayerContext {
  const base = contextFor(p.core, call, layer, reason);
  const maxTokens = summaryMaxTokens(p.core.config, base.threshold);
  return {
    ...base,
    summarizer,
    ...(clearance.instructions ? { instructions: clearance.instructions } : {}),
    continuation: base.trigger === "manual" ? "none" : (p.core.config.continuation ?? "interactive"),
    summaryMaxTokens: maxTokens,
    maxInputTokens: Math.max(
      SUMMARY_MIN_INPUT_TOKENS,
      base.contextWindow - maxTokens - COMPACT_PROMPT_TOKENS,
    ),
    reservedTokens: rehydrationBudget(p.core.config, base.threshold),
    cacheSafe: p.core.shape.cacheSafe,
    ...(p.core.options.transcript?.path ? { transcriptPath: p.core.options.transcript.path } : {}),
    onKeepAlive: () => p.core.events.emit({ type: "keep-alive", layer: layer.name }),
  };
}

/**
 * PreCompact: the user's instructions first, each plugin's appended. A veto stops a manual or automatic
 * summary below the blocking limit; at it, the summary runs anyway and an event says so. Reactive
 * compaction is never vetoed. Resolves to undefined when vetoed.
 */
async function clear(
  p: Pipeline,
  call: LadderCall,
  layer: SummaryLayer,
  trigger: CompactTrigger,
): Promise<Clearance | undefined> {
  const user = requestFor(call, layer)?.instructions;
  if (!p.core.options.hooks) return user ? { instructions: user } : {};
  const result = await p.core.options.hooks.preCompact.promise(
    { instructions: user ?? "" },
    {
      sessionId: p.core.options.sessionId ?? "",
      trigger,
      tokens: call.state.tokens,
      threshold: call.state.threshold,
    },
  );
  p.core.pins.pinForPlugins(result.pin ?? []);
  const instructions = result.instructions.trim().length > 0 ? { instructions: result.instructions } : {};
  if (!result.veto || trigger === "reactive") return instructions;
  const by = result.veto.by ?? "a plugin";
  if (trigger === "auto" && call.state.tokens >= call.state.blockingLimit) {
    p.core.events.emit({
      type: "veto-overridden",
      layer: layer.name,
      by,
      reason: result.veto.reason,
      tokens: call.state.tokens,
      blockingLimit: call.state.blockingLimit,
    });
    return instructions;
  }
  p.core.events.emit({ type: "vetoed", layer: layer.name, by, reason: result.veto.reason });
  return undefined;
}

async function run(
  p: Pipeline,
  call: LadderCall,
  due: readonly { layer: SummaryLayer; reason: string }[],
  runOptions: { fallback?: boolean } = {},
): Promise<void> {
  const first = due[0]!;
  const trigger = contextFor(p.core, call, first.layer, first.reason).trigger;
  const started = p.core.timer();
  if (trigger === "auto" && p.background && (await applyBackground(p, call, started, first.reason))) return;
  const clearance = await clear(p, call, first.layer, trigger);
  if (!clearance) return;
  for (let index = 0; index < due.length; index++) {
    const { layer, reason } = due[index]!;
    const breaker = p.core.breakers.get(layer.name);
    const closed = breaker.closed && !runOptions.fallback;
    // An open breaker skips the layer; the last one still runs, on the fallback summariser.
    if (!closed && index < due.length - 1) continue;
    // Offline, the session's summariser is the fallback itself: nothing stands in for anything.
    const fallback: SummaryFallback | undefined =
      closed || p.core.summarizer === p.core.fallbackSummarizer
        ? undefined
        : breaker.closed
          ? { reason: "blocking-limit" }
          : { reason: "paused", retryInCalls: breaker.callsUntilRetry };
    if (await attempt(p, call, layer, reason, clearance, started, fallback)) return;
  }
}

/** Runs one summary layer on the session's summariser, or on the fallback one when `fallback` says why. */
async function attempt(
  p: Pipeline,
  call: LadderCall,
  layer: SummaryLayer,
  reason: string,
  clearance: Clearance,
  started: number,
  fallback?: SummaryFallback,
): Promise<boolean> {
  const summarizer = fallback ? p.core.fallbackSummarizer : p.core.summarizer;
  const context = summaryContext(p, call, layer, reason, summarizer, clearance);
  let outcome: CompactionOutcome | undefined;
  try {
    outcome = await layer.run(p.core.view.view, context);
  } catch (error) {
    if (error instanceof CompactionFailedError && error.reason === "nothing-to-summarize") {
      if (context.trigger === "manual") throw error;
      return false;
    }
    // The caller cancelled the call: not the summariser's fault, and nothing more is tried in this call.
    if (call.options.signal?.aborted) return false;
    p.core.breakers.fail(layer.name, context.trigger, error);
    const breaker = p.core.breakers.get(layer.name);
    if (!fallback && !breaker.closed && p.core.summarizer !== p.core.fallbackSummarizer) {
      // The model path just opened its breaker: the fallback summariser writes this summary, now.
      return attempt(p, call, layer, reason, clearance, started, {
        reason: "paused",
        retryInCalls: breaker.callsUntilRetry,
      });
    }
    if (context.trigger === "manual") throw error;
    return false;
  }
  if (!outcome) return false;
  const primary = summarizer !== p.core.fallbackSummarizer;
  return apply(p, call, layer, context.trigger, outcome, started, reason, primary, fallback);
}

/**
 * Applies a compaction if it helps: never when it would drop the newest turn, not shrink the context, or
 * leave ≥ 95 % of it (a stall); a result above half the threshold is applied but counts as a failure (the
 * thrash guard), so the fallback summariser takes over instead of compacting every turn. `primary`: written
 * by the session's summariser (its success closes the layer's breaker), not the fallback; `fallback`: why the
 * fallback wrote it instead, for the report and the transcript.
 */
async function apply(
  p: Pipeline,
  call: LadderCall,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  proposed: CompactionOutcome,
  started: number,
  reason: string,
  primary: boolean,
  fallback: SummaryFallback | undefined,
): Promise<boolean> {
  const outcome = keepPinned(p.core.view.view, proposed, p.core.pins.honoured()); // pinned: kept verbatim
  const byId = new Map(p.core.view.view.map((message) => [message.id, message]));
  const summarized = outcome.summarizedMessageIds.flatMap((id) => byId.get(id) ?? []);
  const kept = outcome.keptMessageIds.flatMap((id) => byId.get(id) ?? []);
  const dropped = newestTurnDropped(p.core.view.view, outcome);
  if (dropped) {
    decline(
      p,
      call,
      layer,
      trigger,
      `The ${layer.name} compaction would have removed ${dropped}; not applied.`,
    );
    return false;
  }
  const estimatedBefore = estimateTokens(p.core.view.view);
  // The attachments take at most half of what the summary freed: restoring the files it stands for must not
  // undo it (six files read and summarised, then all six restored, would leave the context as large as before).
  const freed = Math.max(0, estimatedBefore - outcome.tokensAfter);
  const budget = Math.min(
    rehydrationBudget(p.core.config, call.state.threshold),
    Math.floor(freed * ATTACHMENT_SHARE_OF_FREED),
  );
  const restored = await restore(p.core, layer, trigger, summarized, kept, budget);
  const restoredTokens = restored.reduce((sum, attachment) => sum + estimateAttachment(attachment), 0);
  // Never larger: the context it would leave, measured as the next request will be (the provider's count of the
  // context now when a response gave one, the estimate otherwise), must be smaller than the context now.
  const measuredAfter = p.core.size.measure(
    previewView(p.core, layer, trigger, outcome, summarized, kept, restored),
  );
  const after = outcome.tokensAfter + restoredTokens;
  const why = unhelpfulReason(layer, call.state.tokens, measuredAfter, after, estimatedBefore);
  if (call.preview === "asked") {
    // A preview: what it would do; nothing is applied, recorded or counted against the layer.
    call.preview = {
      layer: layer.name,
      summary: outcome.messageText,
      tokensBefore: call.state.tokens,
      tokensAfter: measuredAfter,
      messagesSummarized: outcome.summarizedMessageIds.length,
      ...(why ? { declined: why } : {}),
    };
    return true;
  }
  if (why) {
    decline(p, call, layer, trigger, why);
    return false;
  }
  // SessionStart says a compaction happened: only now that this one is applied (a declined one fires nothing).
  const attachments = [
    ...restored,
    ...(await compactedSessionStart(p.core.options.hooks, p.core.options.sessionId)),
  ];
  const attachmentTokens = attachments.reduce((sum, attachment) => sum + estimateAttachment(attachment), 0);
  const projectedAfter = outcome.tokensAfter + attachmentTokens;
  const tokensBefore = call.state.tokens;
  record(
    p.core,
    layer,
    trigger,
    outcome,
    summarized,
    kept,
    attachments,
    tokensBefore,
    projectedAfter,
    fallback,
  );
  p.background = undefined;
  const chain = p.onCompaction();
  const tokensAfter = p.core.size.tokens();
  call.state.tokens = tokensAfter;
  call.state.acted.add(layer.name);
  call.summarized = true;
  judgeApplied(p, call, layer, trigger, outcome, kept, attachmentTokens, primary);
  const report = summaryReport(layer, trigger, outcome, attachments.length, chain, reason, fallback);
  await p.core.events.publish(
    call.reports,
    {
      ...report,
      tokensBefore,
      tokensAfter,
      tokensFreed: Math.max(0, tokensBefore - tokensAfter),
      durationMs: p.core.timer() - started,
    },
    outcome.summary,
  );
  return true;
}

/**
 * The breakers after a summary was applied: one that left the context above half the threshold (and well above
 * what no compaction can remove) counts as a failure (the thrash guard); otherwise the session's summariser's
 * success closes its breaker. Either way the other layers may try again.
 */
function judgeApplied(
  p: Pipeline,
  call: LadderCall,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  outcome: CompactionOutcome,
  kept: readonly Message[],
  attachmentTokens: number,
  primary: boolean,
): void {
  const tokensAfter = call.state.tokens;
  // What no compaction can remove: the system prompt and tools, a summary of its budget (a longer one is the
  // summariser's fault), the last round, the attachments.
  const irreducible =
    p.core.view.preambleTokens +
    Math.min(estimateTextTokens(outcome.messageText), summaryMaxTokens(p.core.config, call.state.threshold)) +
    estimateTokens(kept.slice(-4)) +
    attachmentTokens;
  if (
    tokensAfter > call.state.threshold * THRASH_FRACTION &&
    tokensAfter > irreducible * DEFAULT_PADDING * IRREDUCIBLE_MARGIN &&
    trigger !== "manual"
  ) {
    p.core.breakers.fail(
      layer.name,
      trigger,
      new CompactionFailedError(
        layer.name,
        `The ${layer.name} compaction left ${tokensAfter} tokens, above half the threshold (${call.state.threshold}).`,
      ),
    );
  } else if (primary) {
    p.core.breakers.get(layer.name).success();
  }
  // The conversation the other layers failed on is gone: they may try again. The fallback's success says
  // nothing of the summariser's health, so its breaker waits out its cool-down.
  p.core.breakers.resetAll(layer.name);
}

/**
 * A summary that is not applied: its breaker counts a failure (an event names why), and the call keeps the
 * reason, so a manual compaction that changes nothing can say why.
 */
function decline(
  p: Pipeline,
  call: LadderCall,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  why: string,
): void {
  call.declined.push({ layer: layer.name, reason: why });
  p.core.breakers.fail(
    layer.name,
    trigger,
    new CompactionFailedError(layer.name, why, { reason: "no-gain" }),
  );
}

/** Awaits the background summary (the wait at the threshold) and splices it in; false when it does not fit any more. */
async function applyBackground(
  p: Pipeline,
  call: LadderCall,
  started: number,
  reason: string,
): Promise<boolean> {
  const pending = p.background;
  if (!pending) return false;
  const waitStart = p.core.timer();
  const result = await pending.promise;
  const waitedMs = p.core.timer() - waitStart;
  p.background = undefined;
  if (result instanceof Error) {
    p.core.breakers.fail(pending.layer.name, "auto", result);
    p.core.events.emit({ type: "background-discarded", reason: result.message });
    return false;
  }
  const spliced = result
    ? splice(p.core, result, call.state.threshold * BACKGROUND_MINIMUM_SHARE, call.state.threshold)
    : undefined;
  if (typeof spliced !== "object") {
    p.core.events.emit({
      type: "background-discarded",
      reason:
        spliced === "changed"
          ? "the conversation no longer ends with what it left out"
          : spliced === "outgrown"
            ? "the conversation has outgrown it: it would not free enough now"
            : "it had nothing to summarise",
    });
    return false;
  }
  if (!(await apply(p, call, pending.layer, "auto", spliced.outcome, started, reason, true, undefined))) {
    p.core.events.emit({ type: "background-discarded", reason: "it would not have made enough room" });
    return false;
  }
  p.core.events.emit({
    type: "background-applied",
    waitedMs,
    messagesSummarized: spliced.outcome.summarizedMessageIds.length,
  });
  return true;
}

async function startBackground(p: Pipeline, call: LadderCall): Promise<void> {
  const layer = p.core.layers.find(
    (candidate): candidate is SummaryLayer =>
      candidate.kind === "summary" && (candidate.early !== undefined || candidate.background === true),
  );
  if (!layer || p.background) return;
  if (layer.early) {
    layer.early();
    return;
  }
  if (!p.core.breakers.get(layer.name).closed) return;
  const reason = `background summary from ${call.state.tokens} tokens`;
  const clearance = await clear(p, call, layer, "auto");
  if (!clearance) return;
  const snapshot = [...p.core.view.view];
  const context = summaryContext(p, call, layer, reason, p.core.summarizer, clearance);
  delete context.signal;
  const entry: Background = {
    layer,
    settled: false,
    promise: Promise.resolve()
      .then(() => layer.run(snapshot, context))
      .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
      .finally(() => {
        entry.settled = true;
      }),
  };
  p.background = entry;
  p.core.events.emit({ type: "background-started", messages: snapshot.length, tokens: call.state.tokens });
}
