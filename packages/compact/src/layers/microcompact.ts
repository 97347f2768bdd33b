import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import { estimateTextTokens } from "../conversation/conversation.ts";
import {
  IDLE_GAP_MINUTES,
  KEEP_RECENT_RESULTS,
  PRUNE_MINIMUM_TOKENS,
  PRUNE_PROTECT_TOKENS,
  PRUNE_PROTECT_TURNS,
} from "../defaults.ts";
import { toolOutputRecord } from "../tool-outputs/tool-output-record.ts";
import {
  type ClearableOutput,
  clearedResultText,
  collectClearableOutputs,
  isClearedResult,
  replaceOutputEdit,
  savedNote,
  type ToolResultOptions,
  toolResultContext,
} from "./clearable-outputs.ts";
import { defineLayer, type EditLayer, plural } from "./layer.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  millis,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";
import { withSavedOutputs } from "./saved-outputs.ts";

export interface MicrocompactOptions extends LayerTimeOptions, ToolResultOptions {
  /**
   * Which path: "time" clears all but the most recent results after an idle gap (the cache is cold anyway);
   * "prune" clears old outputs beyond a protected recent window when that frees enough. Default "time".
   */
  strategy?: "time" | "prune";
  /** Time path: minutes since the last assistant message after which clearing happens; default 60. */
  idleGapMinutes?: number;
  /** Time path: results kept verbatim; default 5. */
  keepRecent?: number;
  /** Prune path: recent tool-output tokens never cleared; default 40,000. */
  protectTokens?: number;
  /** Prune path: user-role messages at the end (prompts or tool results) whose outputs are never cleared; default 2. */
  protectTurns?: number;
  /** Prune path: minimum tokens freed for the prune to happen; default 20,000. */
  minimumFreedTokens?: number;
  /**
   * Ids of messages that come from before the latest compact boundary (kept across it): their results are
   * stale and may be cleared whatever their recency.
   */
  staleMessageIds?: ReadonlySet<string>;
}

/** One output microcompact may clear, and whether it comes from before the latest compact boundary. */
interface Output extends ClearableOutput {
  stale: boolean;
}

/** The outputs microcompact may clear, oldest first; those kept across the latest boundary are stale. */
function collectOutputs(messages: readonly Message[], options: MicrocompactOptions): Output[] {
  const stale = options.staleMessageIds;
  return collectClearableOutputs(messages, options, isClearedResult).map((output) => ({
    ...output,
    stale: stale?.has(output.messageId) ?? false,
  }));
}

/**
 * Clears old tool outputs without a model call. The time path fires only after an idle gap longer than the
 * prompt cache lives (so nothing cached is lost) and keeps the most recent results; the prune path scans
 * back from the end, protects the latest outputs and the last user turns, and clears the rest only when
 * that frees enough to be worth a cache break. Results of reproducible tools (and observation messages) are
 * cleared; those of other tools only once saved (`saveOutput`), and never those of tools that are kept; results
 * already cleared are skipped. A cleared output keeps a one-line record of its original output: the call
 * (command or path), the exit status and the first error lines, and where it was saved. Records one edit per
 * cleared output.
 */
export function microcompact(messages: readonly Message[], options: MicrocompactOptions = {}): LayerResult {
  const strategy = options.strategy ?? "time";
  // The idle check is cheap and usually says no: make it before looking at any output.
  if (strategy === "time" && !idleGapPassed(messages, options)) return unchanged(messages);
  const outputs = collectOutputs(messages, options);
  if (outputs.length === 0) return unchanged(messages);
  const chosen =
    strategy === "time" ? chooseByIdleGap(outputs, options) : chooseByPrune(messages, outputs, options);
  if (chosen.length === 0) return unchanged(messages);
  const edits: ContextEdit[] = [];
  let tokensFreed = 0;
  for (const output of chosen) {
    const original =
      (output.toolUseId === undefined ? undefined : options.originalOutput?.(output.toolUseId)) ??
      output.text;
    let savedPath: string | undefined;
    if (output.save) {
      savedPath =
        output.toolUseId === undefined ? undefined : options.saveOutput?.(output.toolUseId, original);
      if (savedPath === undefined) continue;
    }
    const content = clearedResultText(
      toolOutputRecord(output.use, original, output.isError, savedPath),
      output.toolUseId,
    );
    const freed = output.tokens - estimateTextTokens(content);
    if (freed <= 0) continue;
    tokensFreed += freed;
    edits.push(replaceOutputEdit(output, content, "cleared"));
  }
  if (tokensFreed <= 0) return unchanged(messages);
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, { cleared: edits.length });
}

/** True when the last assistant message is older than the idle gap (the prompt cache has expired). */
function idleGapPassed(messages: readonly Message[], options: MicrocompactOptions): boolean {
  const gapMinutes = options.idleGapMinutes ?? IDLE_GAP_MINUTES;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "assistant") continue;
    const last = Date.parse(message.timestamp);
    return Number.isFinite(last) && (millis(options.now) - last) / 60_000 > gapMinutes;
  }
  return false;
}

function chooseByIdleGap(outputs: Output[], options: MicrocompactOptions): Output[] {
  const keep = Math.max(0, options.keepRecent ?? KEEP_RECENT_RESULTS);
  const fresh = outputs.filter((output) => !output.stale);
  const kept = new Set(fresh.slice(Math.max(0, fresh.length - keep)));
  return outputs.filter((output) => !kept.has(output));
}

function chooseByPrune(
  messages: readonly Message[],
  outputs: Output[],
  options: MicrocompactOptions,
): Output[] {
  const protectTokens = options.protectTokens ?? PRUNE_PROTECT_TOKENS;
  const protectTurns = options.protectTurns ?? PRUNE_PROTECT_TURNS;
  const minimum = options.minimumFreedTokens ?? PRUNE_MINIMUM_TOKENS;
  // The first of the protected user-role messages: outputs from there on are never cleared.
  let turns = 0;
  let protectedFrom = messages.length;
  for (let index = messages.length - 1; index >= 0 && turns < protectTurns; index--) {
    const message = messages[index]!;
    if (message.role === "user" && !message.isMeta) turns++;
    protectedFrom = index;
  }
  const chosen: Output[] = [];
  let seen = 0;
  let freed = 0;
  for (let index = outputs.length - 1; index >= 0; index--) {
    const output = outputs[index]!;
    if (output.stale) {
      chosen.push(output);
      freed += output.tokens;
      continue;
    }
    if (output.messageIndex >= protectedFrom) continue;
    seen += output.tokens;
    if (seen > protectTokens) {
      chosen.push(output);
      freed += output.tokens;
    }
  }
  return freed >= minimum ? chosen.reverse() : [];
}

export interface MicrocompactLayerOptions
  extends Omit<
    MicrocompactOptions,
    | "now"
    | "strategy"
    | "staleMessageIds"
    | "minimumFreedTokens"
    | "retention"
    | "saveOutput"
    | "originalOutput"
  > {
  /** Prune: the fewest tokens a prune must free; default 20,000 scaled to the window. */
  minimumFreedTokens?: number;
}

/**
 * Microcompact as a layer: after an idle gap longer than the prompt cache lives it clears all but the most
 * recent outputs (the cache is cold, so this costs nothing); in a batch of the cheap layers it prunes old
 * outputs beyond the most recent 40,000 tokens (scaled to the window).
 */
export function createMicrocompactLayer(options: MicrocompactLayerOptions = {}): EditLayer {
  const gapMs = (options.idleGapMinutes ?? IDLE_GAP_MINUTES) * 60_000;
  return defineLayer({
    name: "microcompact",
    label: "Microcompact",
    color: "#16a34a",
    kind: "edit",
    due(state) {
      if (state.trigger !== "auto") return false;
      if (state.idleMs > gapMs) return "idle longer than the prompt cache lives";
      return state.batch ? "context at the cheap-layer level" : false;
    },
    run(messages, context) {
      const idle = context.idleMs > gapMs;
      return withSavedOutputs(context, (saveOutput) =>
        microcompact(messages, {
          protectTokens: Math.round(PRUNE_PROTECT_TOKENS * context.scale),
          ...options,
          minimumFreedTokens: options.minimumFreedTokens ?? Math.round(PRUNE_MINIMUM_TOKENS * context.scale),
          strategy: idle ? "time" : "prune",
          now: context.now,
          staleMessageIds: context.staleMessageIds,
          ...toolResultContext(context, saveOutput),
        }),
      );
    },
    describe: (report) =>
      `Cleared ${plural(report.stats.cleared ?? 0, "old tool result")}${savedNote(report.stats)}: ${report.reason}.`,
  });
}
