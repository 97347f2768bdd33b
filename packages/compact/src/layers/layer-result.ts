import type { Message } from "@unforget/core";
import { applyLayerEdits, type ContextEdit } from "@unforget/transcript";
import { estimateTokens } from "../conversation/conversation.ts";
import { findNewestTurn, touchesNewestTurn } from "../conversation/newest-turn.ts";

/** What a layer returns: the new messages and the edits that turn the old ones into them. */
export interface LayerResult {
  /** The messages after the layer; a new array, the input is never mutated. */
  messages: Message[];
  /** The edits to record in the transcript (empty when the layer did nothing). Replaying them reproduces `messages`. */
  edits: ContextEdit[];
  /** Estimated tokens the layer removed; never negative (a layer that would add tokens does nothing). */
  tokensFreed: number;
  /** Counts for reports ("cleared", "persisted", "snipped", …). */
  stats: Record<string, number>;
}

/** Options every layer takes. */
export interface LayerTimeOptions {
  /** Time of the edits (replacement messages carry it); default now. Replays pass the recorded clock. */
  now?: Date | number;
}

export function isoTime(now: Date | number | undefined): string {
  if (now === undefined) return new Date().toISOString();
  return (typeof now === "number" ? new Date(now) : now).toISOString();
}

export function millis(now: Date | number | undefined): number {
  if (now === undefined) return Date.now();
  return typeof now === "number" ? now : now.getTime();
}

/** A result that changes nothing. */
export function unchanged(messages: readonly Message[]): LayerResult {
  return { messages: [...messages], edits: [], tokensFreed: 0, stats: {} };
}

/**
 * Builds a layer's result by replaying its edits through the same code the projection uses, so what the
 * live session sends and what a resumed session projects can never differ. Edits that would clear, fold or
 * remove part of the newest turn (`findNewestTurn`) are left out — only the tool-result budget may cut it
 * (`newestTurn: "may-cut"`) — and the tokens freed are then measured (as they are when `tokensFreed` is not
 * positive). A result that frees nothing changes nothing.
 */
export function resultFromEdits(
  messages: readonly Message[],
  edits: ContextEdit[],
  timestamp: string,
  tokensFreed: number,
  stats: Record<string, number>,
  options: { newestTurn?: "keep" | "may-cut" } = {},
): LayerResult {
  let kept = edits;
  if (options.newestTurn !== "may-cut" && edits.length > 0) {
    const turn = findNewestTurn(messages);
    kept = edits.filter((edit) => !touchesNewestTurn(edit, turn));
  }
  if (kept.length === 0) return unchanged(messages);
  const after = applyLayerEdits(
    messages,
    kept.map((edit) => ({ edit, timestamp })),
  );
  // The layer's own estimate when it gave one and every edit stands; otherwise measured.
  const freed =
    kept.length === edits.length && tokensFreed > 0
      ? tokensFreed
      : estimateTokens(messages) - estimateTokens(after);
  if (freed <= 0) return unchanged(messages);
  return { messages: after, edits: kept, tokensFreed: Math.max(0, freed), stats };
}
