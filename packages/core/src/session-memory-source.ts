/**
 * Session notes as a compaction reads them. `@unforget/compact` consumes this contract and
 * `@unforget/memory` implements it; it lives here so that neither package depends on the other.
 */
export interface SessionMemoryNotes {
  /** The notes as markdown, already cut for compaction (every section header kept, overflow marked). */
  text: string;
  /**
   * Id of the last conversation message the notes cover. Messages after it are kept verbatim by a
   * session-memory compaction; when unknown, the compaction keeps a window counted back from the end.
   */
  lastSummarizedMessageId?: string;
  /** Where the full notes file lives, so the compacted context can point the model at it. */
  path?: string;
  /** ISO-8601 time the notes were last updated. */
  updatedAt?: string;
}

/** A source of session notes that a compaction may use instead of calling a model. */
export interface SessionMemorySource {
  /**
   * Called right before a session-memory compaction reads the notes: resolves once an extraction that is
   * in flight has finished or failed (at once when none is). Never rejects; gives up after `timeoutMs`.
   */
  waitForPendingExtraction(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /**
   * Called at compaction time. Resolves to the current notes, or `undefined` when there are none or they
   * are still the empty template (a compaction then falls back to a summary). Never rejects.
   */
  readNotes(): Promise<SessionMemoryNotes | undefined>;
  /**
   * Optional. Called when the context passes the early mark before the compaction threshold: the source
   * may start an extraction in the background so that fresh notes are ready at the threshold. Returns at
   * once and never throws.
   */
  requestUpdate?(reason: "early-mark" | "before-compaction"): void;
}
