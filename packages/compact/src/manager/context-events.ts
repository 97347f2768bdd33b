import type { PostCompactEvent, SessionHooks } from "@unforget/hooks";
import type { CompactTrigger } from "@unforget/transcript";

/** What one layer did during one `prepare` / `recover` / `compact` call. */
export interface LayerReport {
  /** The layer's name (see the manager's `layers` for its label and colour). */
  layer: string;
  trigger: CompactTrigger;
  tokensBefore: number;
  tokensAfter: number;
  /** Estimated tokens removed (≥ 0). */
  tokensFreed: number;
  /** Real time the layer took (the manager's timer, not the session clock). */
  durationMs: number;
  /** Layer counts ("cleared", "persisted", "snipped", "runs", …) and, for summaries, the summariser's calls and tokens. */
  stats: Record<string, number>;
  /** Which summariser wrote the summary, for summary layers ("model", "extractive" — the offline one —, …). */
  summarizer?: string;
  /** Set when the fallback summariser wrote it instead of the session's: why, and when the other is tried again. */
  fallback?: SummaryFallback;
  /** Messages the summary stands for, for summary layers. */
  messagesSummarized?: number;
  /** One line for logs: why the layer acted. */
  reason: string;
}

/** Why a summary was written by the fallback summariser (the offline one by default). */
export interface SummaryFallback {
  /**
   * "paused": the session's summariser failed too often in a row and rests (its circuit breaker is open);
   * "blocking-limit": the context stayed at the blocking limit after the ladder, so a summary was written at
   * once without a model call.
   */
  reason: "paused" | "blocking-limit";
  /** Model calls until the session's summariser is tried again, while it is paused. */
  retryInCalls?: number;
}

/** A summary that was written but not applied (it would have dropped the newest turn, or freed too little). */
export interface DeclinedCompaction {
  layer: string;
  /** A sentence that says why. */
  reason: string;
}

/** What a manual compaction asked for as a preview would do (`compact(messages, { preview: true })`); nothing is applied. */
export interface CompactionPreview {
  /** The layer that wrote it ("summary", "session-memory", …). */
  layer: string;
  /** The summary message as it would stand for the summarised messages. */
  summary: string;
  /** The context now, as the next request is measured. */
  tokensBefore: number;
  /** The context it would leave, measured the same way (the files it brings back included). */
  tokensAfter: number;
  /** How many messages it would replace. */
  messagesSummarized: number;
  /** Why it would not be applied, when it would not (it would grow the context, free too little, …). */
  declined?: string;
}

/** Everything the manager reports while it works: for UIs, logs and the replay report. */
export type ContextEvent =
  | ({ type: "layer" } & LayerReport)
  | {
      type: "layer-failed";
      layer: string;
      trigger: CompactTrigger;
      error: string;
      consecutiveFailures: number;
    }
  /**
   * A layer's breaker opened: it is skipped until its cool-down ends (`retryInCalls` model calls) or another
   * compaction succeeds. For a summary layer, the fallback summariser writes its summaries meanwhile.
   */
  | { type: "breaker-open"; layer: string; consecutiveFailures: number; retryInCalls: number }
  /** A PreCompact plugin vetoed a summary below the blocking limit: nothing was summarised. */
  | { type: "vetoed"; layer: string; by: string; reason: string }
  /** The context reached the blocking limit: the summary runs although a plugin vetoed it. */
  | {
      type: "veto-overridden";
      layer: string;
      by: string;
      reason: string;
      tokens: number;
      blockingLimit: number;
    }
  | { type: "background-started"; messages: number; tokens: number }
  /** A background summary was spliced in; `waitedMs` is the real time the call waited for it. */
  | { type: "background-applied"; waitedMs: number; messagesSummarized: number }
  | { type: "background-discarded"; reason: string }
  | { type: "cache-break"; previousCacheRead: number; cacheRead: number; droppedTokens: number }
  | { type: "keep-alive"; layer: string }
  /**
   * Pinned messages no longer fit their cap (the window shrank, or newer pins took it): from now on they are
   * compacted like any message, until an unpin or a larger window makes room again.
   */
  | { type: "pins-unhonoured"; messageIds: string[]; tokens: number; capTokens: number }
  /** A pin a PreCompact plugin asked for could not be made (no such id, or past the cap); the compaction went on. */
  | { type: "pin-refused"; id: string; by: string; reason: string };

export type ContextEventListener = (event: ContextEvent) => void;

/** Where the manager's events go: listeners, the call's reports, and PostCompact observers. */
export interface ContextEvents {
  /** Sends an event to every listener; a throwing listener is ignored (it must not break the session). */
  emit(event: ContextEvent): void;
  /** Subscribes; returns the unsubscribe function. */
  on(listener: ContextEventListener): () => void;
  /** A layer acted: its report goes into the call's reports, the event stream and the PostCompact observers. */
  publish(reports: LayerReport[], report: LayerReport, summary?: string): Promise<void>;
}

export interface ContextEventsOptions {
  hooks?: SessionHooks;
  sessionId?: string;
  /** The transcript's path, given to PostCompact observers. */
  transcriptPath?: string;
  onEvent?: ContextEventListener;
}

export function createContextEvents(options: ContextEventsOptions): ContextEvents {
  const listeners = new Set<ContextEventListener>();
  if (options.onEvent) listeners.add(options.onEvent);
  const emit = (event: ContextEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener must not break the session.
      }
    }
  };
  return {
    emit,
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async publish(reports, report, summary) {
      reports.push(report);
      emit({ type: "layer", ...report });
      if (!options.hooks) return;
      const event: PostCompactEvent = {
        sessionId: options.sessionId ?? "",
        trigger: report.trigger,
        layer: report.layer,
        tokensBefore: report.tokensBefore,
        tokensAfter: report.tokensAfter,
      };
      if (options.transcriptPath) event.transcriptId = options.transcriptPath;
      if (summary !== undefined) event.summary = summary;
      if (report.messagesSummarized !== undefined) event.messagesSummarized = report.messagesSummarized;
      await options.hooks.postCompact.promise(event);
    },
  };
}
