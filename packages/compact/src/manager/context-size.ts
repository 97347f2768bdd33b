import type { Message } from "@unforget/core";
import {
  type CalibrationKey,
  type Calibrator,
  DEFAULT_PADDING,
  measureContextTokens,
} from "@unforget/tokens";
import { estimateTokens } from "../conversation/conversation.ts";
import type { ContextView } from "./context-view.ts";

/** The manager's count of the context: usage-anchored, corrected by what the provider reported. */
export interface ContextSize {
  /** Context size now, in tokens: the last usage (or the size a layer left) plus the calibrated estimate of what came after. */
  tokens(): number;
  /**
   * What `tokens()` would say once a compaction leaves these messages (nothing anchors them then): the calibrated,
   * padded estimate with the system prompt and tools. The pipeline compares it with `tokens()` before applying one.
   */
  measure(messages: readonly Message[]): number;
  /** True when the count rests on a provider's usage (or on the size a layer left from one), not on estimates alone. */
  anchored(): boolean;
  /**
   * Called after a layer removed `freedEstimate` (estimated) tokens from a context of `before`, with whether
   * `before` was anchored: an anchored count continues from there; an estimated one is simply recounted.
   */
  afterEdit(before: number, freedEstimate: number, anchored: boolean): void;
  /** Called after a compact boundary: the count starts afresh from the projection. */
  afterBoundary(): void;
  /** Called with the messages a call added: responses with usage re-anchor the count and feed the calibrator. */
  observe(added: readonly Message[]): void;
  /** Called when a request is returned: remembers how it was estimated, so the next usage can calibrate. */
  recordRequest(): void;
}

/**
 * Counts the context the way the provider will: the last response's usage plus the calibrated estimate of
 * what was added since. After a layer edits what that usage covered, the usage is stale: the count continues
 * from the size the layer left (real tokens less the calibrated freed estimate) until a response reports
 * fresh usage. The calibrator compares the estimate of what came after the previous anchor with what the
 * provider reported beyond it.
 */
export function createContextSize(
  view: ContextView,
  calibrator: Calibrator,
  key: CalibrationKey,
): ContextSize {
  let edited: { tokens: number; extra: number } | undefined;
  let lastRequest: { anchored: number; estimated: number } | undefined;
  const tokens = () => {
    if (edited) return edited.tokens + edited.extra;
    const count = view.count();
    return Math.max(0, count.anchorTokens + calibrator.correct(key, count.estimatedTokens));
  };
  return {
    tokens,
    measure(messages) {
      const unanchored = messages.map((message) => {
        if (message.usage === undefined) return message;
        const { usage: _usage, ...rest } = message;
        return rest;
      });
      const count = measureContextTokens(unanchored, { preambleTokens: view.preambleTokens });
      return Math.max(0, calibrator.correct(key, count.estimatedTokens));
    },
    anchored: () => edited !== undefined || view.count().anchorIndex >= 0,
    afterEdit(before, freedEstimate, anchored) {
      edited = anchored
        ? { tokens: Math.max(0, before - calibrator.correct(key, freedEstimate)), extra: 0 }
        : undefined;
    },
    afterBoundary() {
      edited = undefined;
    },
    observe(added) {
      if (edited) {
        if (added.some((message) => message.role === "assistant" && message.usage)) edited = undefined;
        else edited.extra += calibrator.correct(key, Math.ceil(estimateTokens(added) * DEFAULT_PADDING));
      }
      for (const message of added) {
        if (message.role !== "assistant" || !message.usage || lastRequest === undefined) continue;
        const usage = message.usage;
        const reported = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
        if (reported > lastRequest.anchored) {
          calibrator.observe(key, lastRequest.estimated, reported - lastRequest.anchored);
        }
        lastRequest = undefined;
      }
    },
    recordRequest() {
      if (edited) {
        lastRequest = undefined;
        return;
      }
      const count = view.count();
      lastRequest =
        count.anchorIndex >= 0
          ? { anchored: count.anchorTokens, estimated: count.estimatedTokens / DEFAULT_PADDING }
          : {
              anchored: 0,
              estimated:
                (count.estimatedTokens - view.preambleTokens) / DEFAULT_PADDING + view.preambleTokens,
            };
    },
  };
}
