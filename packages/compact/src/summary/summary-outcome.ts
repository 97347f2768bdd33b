import type { Message } from "@unforget/core";
import { DEFAULT_PADDING } from "@unforget/tokens";
import { applyLayerEdits, type CompactTrigger } from "@unforget/transcript";
import { estimateTextTokens, estimateTokens } from "../conversation/conversation.ts";
import { findNewestTurn } from "../conversation/newest-turn.ts";
import {
  ATTACHMENT_SHARE_OF_FREED,
  POST_COMPACT_TOTAL_TOKENS,
  REHYDRATION_SHARE,
  STALL_FRACTION,
} from "../defaults.ts";
import type { SummaryLayer } from "../layers/layer.ts";
import type { LayerReport, SummaryFallback } from "../manager/context-events.ts";
import type { BoundaryInput } from "../manager/context-view.ts";
import type { ManagerCore } from "../manager/ladder.ts";
import type { CompactionOutcome } from "./compaction-outcome.ts";
import { rehydrate } from "./rehydration.ts";

/** The attachments that come back after a compaction (a failing provider is reported, not fatal). */
export function restore(
  core: ManagerCore,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  summarized: readonly Message[],
  kept: readonly Message[],
  budgetTokens: number,
): ReturnType<typeof rehydrate> {
  const { options, events } = core;
  return rehydrate(
    options.attachments ?? [],
    { trigger, summarized, kept, budgetTokens },
    {
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
}

/** A summary's report, but for its sizes and duration. */
export function summaryReport(
  layer: SummaryLayer,
  trigger: CompactTrigger,
  outcome: CompactionOutcome,
  attachments: number,
  chain: number,
  reason: string,
  fallback: SummaryFallback | undefined,
): Omit<LayerReport, "tokensBefore" | "tokensAfter" | "tokensFreed" | "durationMs"> {
  return {
    layer: layer.name,
    trigger,
    stats: {
      summarizerCalls: outcome.summarizer.calls,
      summarizerInputTokens: outcome.summarizer.inputTokens,
      summarizerOutputTokens: outcome.summarizer.outputTokens,
      kept: outcome.keptMessageIds.length,
      attachments,
      ptlRetries: outcome.ptlRetries,
      summaryPieces: outcome.pieces,
      recompactionChain: chain,
    },
    summarizer: outcome.summarizer.name,
    ...(fallback ? { fallback } : {}),
    messagesSummarized: outcome.summarizedMessageIds.length,
    reason,
  };
}

/** Which summariser wrote a summary, kept with it in the transcript. */
export function writtenBy(outcome: CompactionOutcome, fallback: SummaryFallback | undefined) {
  return { summarizer: outcome.summarizer.name, ...(fallback ? { fallback: fallback.reason } : {}) };
}

/** The edit of a partial compaction: the summarised range replaced in place by the summary. */
export function replaceEdit(
  layer: SummaryLayer,
  outcome: CompactionOutcome,
  summarized: readonly Message[],
  fallback: SummaryFallback | undefined,
) {
  return {
    kind: "replace_messages" as const,
    messageIds: outcome.summarizedMessageIds,
    details: {
      replacement: {
        id: `${layer.name}_${summarized[0]?.id ?? "summary"}`,
        role: "user" as const,
        text: outcome.messageText,
      },
      reason: layer.name,
      ...writtenBy(outcome, fallback),
    },
  };
}

/** What a boundary compaction records (the sizes are the report's). */
export function boundaryInput(
  core: ManagerCore,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  outcome: CompactionOutcome,
  kept: readonly Message[],
  attachments: Awaited<ReturnType<typeof rehydrate>>,
  tokensBefore: number,
  tokensAfter: number,
  fallback: SummaryFallback | undefined,
): BoundaryInput {
  return {
    trigger,
    layer: layer.name,
    summaryText: outcome.messageText,
    keptMessageIds: kept.map((message) => message.id),
    messagesSummarized: outcome.summarizedMessageIds.length,
    tokensBefore,
    tokensAfter,
    attachments,
    discoveredTools: [...core.shape.discoveredTools],
    ...writtenBy(outcome, fallback),
  };
}

/** The view a compaction would leave, recording nothing (what `apply` measures before it records). */
export function previewView(
  core: ManagerCore,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  outcome: CompactionOutcome,
  summarized: readonly Message[],
  kept: readonly Message[],
  attachments: Awaited<ReturnType<typeof rehydrate>>,
): Message[] {
  if (outcome.mode !== "replace")
    return core.view.previewBoundary(
      boundaryInput(core, layer, trigger, outcome, kept, attachments, 0, 0, undefined),
    );
  return core.view.preview([
    {
      type: "layer_decision",
      id: "preview_layer",
      layer: layer.name,
      edits: [replaceEdit(layer, outcome, summarized, undefined)],
      tokensBefore: 0,
      tokensAfter: 0,
      reason: "preview",
    },
    ...attachments.map((attachment, index) => ({
      type: "attachment" as const,
      id: `preview_attachment_${index}`,
      attachment,
    })),
  ]);
}

/** Writes a compaction into the view and the transcript: a boundary, or a range replaced in place. */
export function record(
  core: ManagerCore,
  layer: SummaryLayer,
  trigger: CompactTrigger,
  outcome: CompactionOutcome,
  summarized: readonly Message[],
  kept: readonly Message[],
  attachments: Awaited<ReturnType<typeof rehydrate>>,
  tokensBefore: number,
  projectedAfter: number,
  fallback: SummaryFallback | undefined,
): void {
  if (outcome.mode === "replace") {
    const edit = replaceEdit(layer, outcome, summarized, fallback);
    const messages = applyLayerEdits(core.view.view, [
      { edit, timestamp: new Date(core.clock()).toISOString() },
    ]);
    core.view.applyLayer(
      layer.name,
      messages,
      [edit],
      tokensBefore,
      projectedAfter,
      `partial ${trigger} compaction`,
    );
    core.view.appendAttachments(attachments);
  } else {
    core.view.applyBoundary(
      boundaryInput(core, layer, trigger, outcome, kept, attachments, tokensBefore, projectedAfter, fallback),
    );
  }
  core.size.afterBoundary();
  core.cacheBreaks.resetBaseline();
}

/** What the attachments restored after a summary may take at most (files, plan, skills…). */
export const rehydrationBudget = (config: ManagerCore["config"], threshold: number) =>
  Math.min(POST_COMPACT_TOTAL_TOKENS, Math.floor(threshold * (config.rehydrationShare ?? REHYDRATION_SHARE)));

/**
 * A background summary stands for a prefix of the conversation as it was. It applies to the view as it is
 * now when the messages it covers — or replacements (folds, placeholders) of only such messages — still form
 * a prefix: the cheap layers' edits to that prefix are superseded by the summary, their edits after it kept.
 * And only while it frees enough (at the threshold a tenth of it; when spliced in early, as much as a cheap
 * layer must), net of the files applying it may restore (at most half of what it frees, within `rehydrationBudget`): short
 * of that, the conversation has outgrown it.
 */
export function splice(
  core: ManagerCore,
  outcome: CompactionOutcome,
  minimumFreed: number,
  threshold: number,
): { outcome: CompactionOutcome } | "changed" | "outgrown" {
  const covered = new Set(outcome.summarizedMessageIds);
  const current = core.view.view;
  // A message is covered when the summary read it, or read everything it stands for (a fold made since). A
  // fold or digest made since of messages on both sides of the summary's end stays, after it, with what follows
  // it: the summary repeats part of what they say, which loses nothing.
  const isCovered = (message: Message) =>
    covered.has(message.id) || core.view.originalsOf(message.id).every((id) => covered.has(id));
  let cut = 0;
  while (cut < current.length && isCovered(current[cut]!)) cut++;
  if (cut === 0) return "changed";
  const kept = current.slice(cut);
  const keptUses = new Set(
    kept.flatMap((message) =>
      message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])),
    ),
  );
  const orphan = kept.some((message) =>
    message.content.some((block) => block.type === "tool_result" && !keptUses.has(block.tool_use_id)),
  );
  if (orphan) return "changed";
  const tokensAfter = estimateTextTokens(outcome.messageText) + estimateTokens(kept);
  // Freeing too little, or not getting under the threshold, the conversation has outgrown it: a summary
  // written now does better. Under the threshold is judged by the estimate, as for a summary written at the
  // threshold: with the estimate's padding on top, background summaries that left about as much as a fresh one
  // would were thrown away, and the call waited for the fresh one (background benchmark, 16K: 6 of 8 applied
  // instead of 3 of 8).
  // What applying it restores (files the summarised part read) comes back on top: counted against what it frees.
  const freed = (estimateTokens(current) - tokensAfter) * DEFAULT_PADDING;
  const restoring = Math.min(
    rehydrationBudget(core.config, threshold),
    Math.floor(Math.max(0, freed) * ATTACHMENT_SHARE_OF_FREED),
  );
  if (freed - restoring < Math.max(1, minimumFreed)) return "outgrown";
  if (tokensAfter + core.view.preambleTokens >= threshold) return "outgrown";
  return {
    outcome: {
      ...outcome,
      summarizedMessageIds: current.slice(0, cut).map((message) => message.id),
      keptMessageIds: kept.map((message) => message.id),
      tokensAfter,
    },
  };
}

/** What of the newest turn a compaction would drop, or undefined when it keeps it (the user's message may be quoted). */
export function newestTurnDropped(
  messages: readonly Message[],
  outcome: CompactionOutcome,
): string | undefined {
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

/**
 * Why a summary would not help, or undefined when it does: the context it leaves (`measuredAfter`, counted as the
 * next request will be) must be smaller than `tokens` now, and it must free more than the stall rule asks.
 */
export function unhelpfulReason(
  layer: SummaryLayer,
  tokens: number,
  measuredAfter: number,
  after: number,
  estimatedBefore: number,
): string | undefined {
  if (measuredAfter >= tokens) {
    return `The ${layer.label.toLowerCase()} was not applied: the context would grow from ${tokens} to about ${measuredAfter} tokens (the summary and what it brings back are larger than what it replaces).`;
  }
  return after >= estimatedBefore * STALL_FRACTION ? stallReason(layer, after, estimatedBefore) : undefined;
}

/** Why a summary that frees too little of the plain estimate (the stall rule) is not applied. */
function stallReason(layer: SummaryLayer, after: number, before: number): string {
  return after >= before
    ? `The ${layer.label.toLowerCase()} was not applied: it would not make the context smaller (about ${after} tokens with the files it brings back, against ${before} now).`
    : `The ${layer.label.toLowerCase()} was not applied: it would free only ${before - after} of about ${before} tokens (less than ${Math.round((1 - STALL_FRACTION) * 100)}%).`;
}
