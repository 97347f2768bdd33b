/** A partial compaction: summarise before `upTo`, or from `from` on. */
export type CompactRange = { upTo: number } | { from: number };

/** How the conversation continues after the summary. */
export type ContinuationStyle =
  /** The user may be there: resume the last task without asking questions. */
  | "interactive"
  /** No one is watching: this is not a first start, keep working. */
  | "autonomous"
  /** A manual compaction: the user will speak next. */
  | "none";

/** What a summary layer returns: the summary, what it stands for and what stays verbatim, and what it cost. */
export interface CompactionOutcome {
  /** "boundary": a compact boundary + summary replace history; "replace": the range is replaced in place. */
  mode: "boundary" | "replace";
  /** The nine-section summary. */
  summary: string;
  /**
   * The text of the user message that carries the summary: the summary, every user message of the part it
   * stands for (those of earlier summaries included) and the continuation instruction.
   */
  messageText: string;
  /** Messages kept verbatim: after the summary ("boundary") or around it ("replace"). */
  keptMessageIds: string[];
  /** Messages the summary stands for. */
  summarizedMessageIds: string[];
  tokensBefore: number;
  /** Estimated tokens of the summary message and the kept messages (attachments not included). */
  tokensAfter: number;
  /**
   * The summariser's spend: model calls and tokens; `inputTokens` is what a model read (for a summariser
   * that calls none, the estimate of what a model would have read, so policies can be compared).
   */
  summarizer: { name: string; calls: number; inputTokens: number; outputTokens: number };
  /** Prompt-too-long retries (each splits the piece that was refused). */
  ptlRetries: number;
  /** Pieces the summariser's input was summarised in: 1 when it fitted (the offline head counts as one). */
  pieces: number;
}
