import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import { type CompactableTools, compactablePredicate } from "./compactable-tools.ts";
import {
  estimateTextTokens,
  indexToolUses,
  isTextObservation,
  resultText,
  userText,
} from "./conversation.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  millis,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";

/** What a cleared result says instead of its content. */
export const CLEARED_RESULT_TEXT = "[Old tool result content cleared]";
/** Idle time after which the prompt cache has expired anyway, so clearing costs nothing: 60 minutes. */
export const DEFAULT_IDLE_GAP_MINUTES = 60;
/** Results kept verbatim by the time-based path. */
export const DEFAULT_KEEP_RECENT_RESULTS = 5;
/** Prune: the most recent tool output (in tokens) that is never cleared. */
export const DEFAULT_PRUNE_PROTECT_TOKENS = 40_000;
/** Prune: user turns at the end whose outputs are never cleared. */
export const DEFAULT_PRUNE_PROTECT_TURNS = 2;
/** Prune: act only when at least this many tokens are freed (each clearing breaks the prompt cache). */
export const DEFAULT_PRUNE_MINIMUM_TOKENS = 20_000;

export interface MicrocompactOptions extends LayerTimeOptions {
  /** Tools whose results may be cleared; default `DEFAULT_COMPACTABLE_TOOLS`. Observation messages always may. */
  compactableTools?: CompactableTools;
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

/** One clearable output: a tool result block or a whole observation message. */
interface Output {
  messageIndex: number;
  messageId: string;
  /** Set for a tool_result block; unset for an observation message. */
  toolUseId?: string;
  tokens: number;
  stale: boolean;
}

/**
 * Clears old tool outputs without a model call. The time path fires only after an idle gap longer than the
 * prompt cache lives (so nothing cached is lost) and keeps the most recent results; the prune path scans
 * back from the end, protects the latest outputs and the last user turns, and clears the rest only when
 * that frees enough to be worth a cache break. Only results of compactable tools (and observation messages)
 * are cleared; results already cleared are skipped. Records one edit per cleared output.
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
  const placeholderTokens = estimateTextTokens(CLEARED_RESULT_TEXT);
  for (const output of chosen) {
    tokensFreed += output.tokens - placeholderTokens;
    edits.push(
      output.toolUseId === undefined
        ? {
            kind: "replace_message",
            messageIds: [output.messageId],
            details: { content: CLEARED_RESULT_TEXT, reason: "cleared" },
          }
        : {
            kind: "replace_tool_result",
            toolUseIds: [output.toolUseId],
            details: { content: CLEARED_RESULT_TEXT, reason: "cleared" },
          },
    );
  }
  if (tokensFreed <= 0) return unchanged(messages);
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, { cleared: edits.length });
}

function collectOutputs(messages: readonly Message[], options: MicrocompactOptions): Output[] {
  const compactable = compactablePredicate(options.compactableTools);
  const calls = indexToolUses(messages);
  const stale = options.staleMessageIds;
  const outputs: Output[] = [];
  messages.forEach((message, messageIndex) => {
    if (message.role !== "user") return;
    if (isTextObservation(message)) {
      const text = userText(message);
      if (text !== CLEARED_RESULT_TEXT) {
        outputs.push({
          messageIndex,
          messageId: message.id,
          tokens: estimateTextTokens(text),
          stale: stale?.has(message.id) ?? false,
        });
      }
      return;
    }
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const call = calls.get(block.tool_use_id);
      if (!call || !compactable(call.use.name)) continue;
      const text = resultText(block);
      if (text === CLEARED_RESULT_TEXT) continue;
      outputs.push({
        messageIndex,
        messageId: message.id,
        toolUseId: block.tool_use_id,
        tokens: estimateTextTokens(text),
        stale: stale?.has(message.id) ?? false,
      });
    }
  });
  return outputs;
}

/** True when the last assistant message is older than the idle gap (the prompt cache has expired). */
function idleGapPassed(messages: readonly Message[], options: MicrocompactOptions): boolean {
  const gapMinutes = options.idleGapMinutes ?? DEFAULT_IDLE_GAP_MINUTES;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "assistant") continue;
    const last = Date.parse(message.timestamp);
    return Number.isFinite(last) && (millis(options.now) - last) / 60_000 > gapMinutes;
  }
  return false;
}

function chooseByIdleGap(outputs: Output[], options: MicrocompactOptions): Output[] {
  const keep = Math.max(0, options.keepRecent ?? DEFAULT_KEEP_RECENT_RESULTS);
  const fresh = outputs.filter((output) => !output.stale);
  const kept = new Set(fresh.slice(Math.max(0, fresh.length - keep)));
  return outputs.filter((output) => !kept.has(output));
}

function chooseByPrune(
  messages: readonly Message[],
  outputs: Output[],
  options: MicrocompactOptions,
): Output[] {
  const protectTokens = options.protectTokens ?? DEFAULT_PRUNE_PROTECT_TOKENS;
  const protectTurns = options.protectTurns ?? DEFAULT_PRUNE_PROTECT_TURNS;
  const minimum = options.minimumFreedTokens ?? DEFAULT_PRUNE_MINIMUM_TOKENS;
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
