import type { Message } from "@unforget/core";
import { DEFAULT_PADDING } from "@unforget/tokens";
import { applyLayerEdits, type CompactTrigger } from "@unforget/transcript";
import type { CompactionOutcome } from "./compact-conversation.ts";
import { CompactionFailedError } from "./compact-error.ts";
import { estimateTextTokens, estimateTokens } from "./conversation.ts";
import {
  BACKGROUND_MINIMUM_SHARE,
  COMPACT_PROMPT_TOKENS,
  IRREDUCIBLE_MARGIN,
  POST_COMPACT_TOTAL_TOKENS,
  REHYDRATION_SHARE,
  STALL_FRACTION,
  SUMMARY_MAX_TOKENS,
  SUMMARY_MIN_INPUT_TOKENS,
  SUMMARY_MIN_TOKENS,
  SUMMARY_SHARE,
  THRASH_FRACTION,
} from "./defaults.ts";
import { contextFor, type LadderCall, type ManagerCore, requestFor, type SummaryStage } from "./ladder.ts";
import type { SummaryLayer, SummaryLayerContext } from "./layer.ts";
import { findNewestTurn } from "./newest-turn.ts";
import { estimateAttachment, rehydrate } from "./rehydration.ts";
import type { Summarizer } from "./summarizer.ts";

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
export function createSummaryPipeline(core: ManagerCore, onCompaction: () => number): SummaryPipeline {
  let background: Background | undefined;
  const { view, events, breakers, config, options } = core;

  const summaryMaxTokens = (threshold: number) =>
    config.summary?.maxTokens ??
    Math.max(SUMMARY_MIN_TOKENS, Math.min(SUMMARY_MAX_TOKENS, Math.floor(threshold * SUMMARY_SHARE)));
  const rehydrationBudget = (threshold: number) =>
    Math.min(
      POST_COMPACT_TOTAL_TOKENS,
      Math.floor(threshold * (config.rehydrationShare ?? REHYDRATION_SHARE)),
    );

  function summaryContext(
    call: LadderCall,
    layer: SummaryLayer,
    reason: string,
    summarizer: Summarizer,
    clearance: Clearance,
  ): SummaryLayerContext {
    const base = contextFor(core, call, layer, reason);
    const maxTokens = summaryMaxTokens(base.threshold);
    return {
      ...base,
      summarizer,
      ...(clearance.instructions ? { instructions: clearance.instructions } : {}),
      continuation: base.trigger === "manual" ? "none" : (config.continuation ?? "interactive"),
      summaryMaxTokens: maxTokens,
      maxInputTokens: Math.max(
        SUMMARY_MIN_INPUT_TOKENS,
        base.contextWindow - maxTokens - COMPACT_PROMPT_TOKENS,
      ),
      reservedTokens: rehydrationBudget(base.threshold),
      cacheSafe: core.shape.cacheSafe,
      ...(options.transcript?.path ? { transcriptPath: options.transcript.path } : {}),
      onKeepAlive: () => events.emit({ type: "keep-alive", layer: layer.name }),
    };
  }

  /**
   * PreCompact: the user's instructions first, each plugin's appended. A veto stops a manual or automatic
   * summary below the blocking limit; at it, the summary runs anyway and an event says so. Reactive
   * compaction is never vetoed. Resolves to undefined when vetoed.
   */
  async function clear(
    call: LadderCall,
    layer: SummaryLayer,
    trigger: CompactTrigger,
  ): Promise<Clearance | undefined> {
    const user = requestFor(call, layer)?.instructions;
    if (!options.hooks) return user ? { instructions: user } : {};
    const result = await options.hooks.preCompact.promise(
      { instructions: user ?? "" },
      {
        sessionId: options.sessionId ?? "",
        trigger,
        tokens: call.state.tokens,
        threshold: call.state.threshold,
      },
    );
    const instructions = result.instructions.trim().length > 0 ? { instructions: result.instructions } : {};
    if (!result.veto || trigger === "reactive") return instructions;
    const by = result.veto.by ?? "a plugin";
    if (trigger === "auto" && call.state.tokens >= call.state.blockingLimit) {
      events.emit({
        type: "veto-overridden",
        layer: layer.name,
        by,
        reason: result.veto.reason,
        tokens: call.state.tokens,
        blockingLimit: call.state.blockingLimit,
      });
      return instructions;
    }
    events.emit({ type: "vetoed", layer: layer.name, by, reason: result.veto.reason });
    return undefined;
  }

  async function run(
    call: LadderCall,
    due: readonly { layer: SummaryLayer; reason: string }[],
    runOptions: { fallback?: boolean } = {},
  ): Promise<void> {
    const first = due[0]!;
    const trigger = contextFor(core, call, first.layer, first.reason).trigger;
    const started = core.timer();
    if (trigger === "auto" && background && (await applyBackground(call, started, first.reason))) return;
    const clearance = await clear(call, first.layer, trigger);
    if (!clearance) return;
    for (let index = 0; index < due.length; index++) {
      const { layer, reason } = due[index]!;
      const closed = breakers.get(layer.name).closed && !runOptions.fallback;
      // An open breaker skips the layer; the last one still runs, on the fallback summariser.
      if (!closed && index < due.length - 1) continue;
      const summarizer = closed ? core.summarizer : core.fallbackSummarizer;
      if (await attempt(call, layer, reason, summarizer, clearance, started)) return;
    }
  }

  async function attempt(
    call: LadderCall,
    layer: SummaryLayer,
    reason: string,
    summarizer: Summarizer,
    clearance: Clearance,
    started: number,
  ): Promise<boolean> {
    const context = summaryContext(call, layer, reason, summarizer, clearance);
    let outcome: CompactionOutcome | undefined;
    try {
      outcome = await layer.run(view.view, context);
    } catch (error) {
      if (error instanceof CompactionFailedError && error.reason === "nothing-to-summarize") {
        if (context.trigger === "manual") throw error;
        return false;
      }
      breakers.fail(layer.name, context.trigger, error);
      if (summarizer !== core.fallbackSummarizer && !breakers.get(layer.name).closed) {
        // The model path just opened its breaker: the fallback summariser writes this summary, now.
        return attempt(call, layer, reason, core.fallbackSummarizer, clearance, started);
      }
      if (context.trigger === "manual") throw error;
      return false;
    }
    if (!outcome) return false;
    return apply(
      call,
      layer,
      context.trigger,
      outcome,
      started,
      reason,
      summarizer !== core.fallbackSummarizer,
    );
  }

  /**
   * Applies a compaction if it helps: never when it would drop the newest turn, not shrink the context, or
   * leave ≥ 95 % of it (a stall); a result above half the threshold is applied but counts as a failure (the
   * thrash guard), so the fallback summariser takes over instead of compacting every turn. `primary`: written
   * by the session's summariser (its success closes the layer's breaker), not the fallback.
   */
  async function apply(
    call: LadderCall,
    layer: SummaryLayer,
    trigger: CompactTrigger,
    outcome: CompactionOutcome,
    started: number,
    reason: string,
    primary: boolean,
  ): Promise<boolean> {
    const byId = new Map(view.view.map((message) => [message.id, message]));
    const summarized = outcome.summarizedMessageIds.flatMap((id) => byId.get(id) ?? []);
    const kept = outcome.keptMessageIds.flatMap((id) => byId.get(id) ?? []);
    const dropped = newestTurnDropped(view.view, outcome);
    if (dropped) {
      breakers.fail(
        layer.name,
        trigger,
        new CompactionFailedError(
          layer.name,
          `The ${layer.name} compaction would have removed ${dropped}; not applied.`,
          { reason: "no-gain" },
        ),
      );
      return false;
    }
    const attachments = await rehydrate(
      options.attachments ?? [],
      { trigger, summarized, kept, budgetTokens: rehydrationBudget(call.state.threshold) },
      {
        ...(options.hooks ? { hooks: options.hooks } : {}),
        ...(options.sessionId ? { sessionId: options.sessionId } : {}),
        onError: (provider, error) =>
          events.emit({
            type: "layer-failed",
            layer: layer.name,
            trigger,
            error: `Attachment provider ${provider}: ${error instanceof Error ? error.message : String(error)}`,
            consecutiveFailures: 0,
          }),
      },
    );
    const attachmentTokens = attachments.reduce((sum, attachment) => sum + estimateAttachment(attachment), 0);
    const projectedAfter = outcome.tokensAfter + attachmentTokens;
    const estimatedBefore = estimateTokens(view.view);
    if (projectedAfter >= estimatedBefore * STALL_FRACTION) {
      breakers.fail(
        layer.name,
        trigger,
        new CompactionFailedError(
          layer.name,
          `The ${layer.name} compaction would leave ${projectedAfter} of ${estimatedBefore} estimated tokens; not applied.`,
          { reason: "no-gain" },
        ),
      );
      return false;
    }
    const tokensBefore = call.state.tokens;
    record(layer, trigger, outcome, summarized, kept, attachments, tokensBefore, projectedAfter);
    background = undefined;
    const chain = onCompaction();
    const tokensAfter = core.size.tokens();
    call.state.tokens = tokensAfter;
    call.state.acted.add(layer.name);
    call.summarized = true;
    // What no compaction can remove: the system prompt and tools, a summary of its budget (a longer one is the
    // summariser's fault), the last round, the attachments.
    const irreducible =
      view.preambleTokens +
      Math.min(estimateTextTokens(outcome.messageText), summaryMaxTokens(call.state.threshold)) +
      estimateTokens(kept.slice(-4)) +
      attachmentTokens;
    if (
      tokensAfter > call.state.threshold * THRASH_FRACTION &&
      tokensAfter > irreducible * DEFAULT_PADDING * IRREDUCIBLE_MARGIN &&
      trigger !== "manual"
    ) {
      breakers.fail(
        layer.name,
        trigger,
        new CompactionFailedError(
          layer.name,
          `The ${layer.name} compaction left ${tokensAfter} tokens, above half the threshold (${call.state.threshold}).`,
        ),
      );
    } else if (primary) {
      breakers.get(layer.name).success();
    }
    // The conversation the other layers failed on is gone: they may try again. The fallback's success says
    // nothing of the summariser's health, so its breaker waits out its cool-down.
    breakers.resetAll(layer.name);
    await events.publish(
      call.reports,
      {
        layer: layer.name,
        trigger,
        tokensBefore,
        tokensAfter,
        tokensFreed: Math.max(0, tokensBefore - tokensAfter),
        durationMs: core.timer() - started,
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
        reason,
      },
      outcome.summary,
    );
    return true;
  }

  /** Writes a compaction into the view and the transcript: a boundary, or a range replaced in place. */
  function record(
    layer: SummaryLayer,
    trigger: CompactTrigger,
    outcome: CompactionOutcome,
    summarized: readonly Message[],
    kept: readonly Message[],
    attachments: Awaited<ReturnType<typeof rehydrate>>,
    tokensBefore: number,
    projectedAfter: number,
  ): void {
    if (outcome.mode === "replace") {
      const edit = {
        kind: "replace_messages" as const,
        messageIds: outcome.summarizedMessageIds,
        details: {
          replacement: {
            id: `${layer.name}_${summarized[0]?.id ?? "summary"}`,
            role: "user" as const,
            text: outcome.messageText,
          },
          reason: layer.name,
        },
      };
      const messages = applyLayerEdits(view.view, [
        { edit, timestamp: new Date(core.clock()).toISOString() },
      ]);
      view.applyLayer(
        layer.name,
        messages,
        [edit],
        tokensBefore,
        projectedAfter,
        `partial ${trigger} compaction`,
      );
      view.appendAttachments(attachments);
    } else {
      view.applyBoundary({
        trigger,
        layer: layer.name,
        summaryText: outcome.messageText,
        keptMessageIds: kept.map((message) => message.id),
        messagesSummarized: outcome.summarizedMessageIds.length,
        tokensBefore,
        tokensAfter: projectedAfter,
        attachments,
        discoveredTools: [...core.shape.discoveredTools],
      });
    }
    core.size.afterBoundary();
    core.cacheBreaks.resetBaseline();
  }

  /** Awaits the background summary (the wait at the threshold) and splices it in; false when it does not fit any more. */
  async function applyBackground(call: LadderCall, started: number, reason: string): Promise<boolean> {
    const pending = background;
    if (!pending) return false;
    const waitStart = core.timer();
    const result = await pending.promise;
    const waitedMs = core.timer() - waitStart;
    background = undefined;
    if (result instanceof Error) {
      breakers.fail(pending.layer.name, "auto", result);
      events.emit({ type: "background-discarded", reason: result.message });
      return false;
    }
    const spliced = result
      ? splice(result, call.state.threshold * BACKGROUND_MINIMUM_SHARE, call.state.threshold)
      : undefined;
    if (!spliced) {
      events.emit({
        type: "background-discarded",
        reason: result
          ? "the conversation no longer ends with what it left out"
          : "it had nothing to summarise",
      });
      return false;
    }
    if (!(await apply(call, pending.layer, "auto", spliced.outcome, started, reason, true))) {
      events.emit({ type: "background-discarded", reason: "it would not have made enough room" });
      return false;
    }
    events.emit({
      type: "background-applied",
      waitedMs,
      messagesSummarized: spliced.outcome.summarizedMessageIds.length,
    });
    return true;
  }

  /**
   * A background summary stands for a prefix of the conversation as it was. It applies to the view as it is
   * now when the messages it covers — or replacements (folds, placeholders) of only such messages — still form
   * a prefix: the cheap layers' edits to that prefix are superseded by the summary, their edits after it kept.
   * And only while it frees enough (at the threshold a tenth of it; when spliced in early, as much as a cheap
   * layer must): short of that, the conversation has outgrown it.
   */
  function splice(
    outcome: CompactionOutcome,
    minimumFreed: number,
    threshold: number,
  ): { outcome: CompactionOutcome } | undefined {
    const covered = new Set(outcome.summarizedMessageIds);
    const current = view.view;
    // A message is covered when the summary read it, or read everything it stands for (a fold made since).
    const isCovered = (message: Message) =>
      covered.has(message.id) || view.originalsOf(message.id).every((id) => covered.has(id));
    let cut = 0;
    while (cut < current.length && isCovered(current[cut]!)) cut++;
    if (cut === 0) return undefined;
    const kept = current.slice(cut);
    if (kept.some(isCovered)) return undefined;
    const keptUses = new Set(
      kept.flatMap((message) =>
        message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])),
      ),
    );
    const orphan = kept.some((message) =>
      message.content.some((block) => block.type === "tool_result" && !keptUses.has(block.tool_use_id)),
    );
    if (orphan) return undefined;
    const tokensAfter = estimateTextTokens(outcome.messageText) + estimateTokens(kept);
    // Freeing too little, or not getting under the threshold, the conversation has outgrown it: a summary
    // written now does better.
    if ((estimateTokens(current) - tokensAfter) * DEFAULT_PADDING < Math.max(1, minimumFreed))
      return undefined;
    if ((tokensAfter + view.preambleTokens) * DEFAULT_PADDING >= threshold) return undefined;
    return {
      outcome: {
        ...outcome,
        summarizedMessageIds: current.slice(0, cut).map((message) => message.id),
        keptMessageIds: kept.map((message) => message.id),
        tokensAfter,
      },
    };
  }

  async function startBackground(call: LadderCall): Promise<void> {
    const layer = core.layers.find(
      (candidate): candidate is SummaryLayer =>
        candidate.kind === "summary" && (candidate.early !== undefined || candidate.background === true),
    );
    if (!layer || background) return;
    if (layer.early) {
      layer.early();
      return;
    }
    if (!breakers.get(layer.name).closed) return;
    const reason = `background summary from ${call.state.tokens} tokens`;
    const clearance = await clear(call, layer, "auto");
    if (!clearance) return;
    const snapshot = [...view.view];
    const context = summaryContext(call, layer, reason, core.summarizer, clearance);
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
    background = entry;
    events.emit({ type: "background-started", messages: snapshot.length, tokens: call.state.tokens });
  }

  return {
    run,
    startBackground,
    async spliceIfReady(call) {
      const pending = background;
      if (!pending?.settled) return false;
      // Only when it fits and frees enough now; otherwise it waits for the threshold.
      const result = await pending.promise;
      if (!result || result instanceof Error) return false;
      if (!splice(result, call.state.minimumFreedTokens, call.state.threshold)) return false;
      return applyBackground(
        call,
        core.timer(),
        "background summary ready while the cheap layers broke the cache",
      );
    },
    get backgroundPending() {
      return background !== undefined;
    },
  };
}

/** What of the newest turn a compaction would drop, or undefined when it keeps it (the user's message may be quoted). */
function newestTurnDropped(messages: readonly Message[], outcome: CompactionOutcome): string | undefined {
  const turn = findNewestTurn(messages);
  const summarized = new Set(outcome.summarizedMessageIds);
  if ([...turn.outputMessageIds].some((id) => summarized.has(id))) return "the newest tool result";
  if (
    turn.userMessageId &&
    summarized.has(turn.userMessageId) &&
    !outcome.messageText.includes(turn.userText ?? "")
  ) {
    return "the user's newest message";
  }
  return undefined;
}
