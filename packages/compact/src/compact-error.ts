import { UnforgetError, type UnforgetErrorOptions } from "@unforget/core";

/** Why a compaction did not happen. */
export type CompactionFailureReason =
  /** Every message is in the verbatim tail: there is nothing to summarise (not a fault; nothing is counted). */
  | "nothing-to-summarize"
  /** The summary request did not fit the model even after dropping the oldest rounds. */
  | "too-long"
  /** The summariser failed or its summary lacked required sections. */
  | "summarizer-failed"
  /** The result would not have made enough room. */
  | "no-gain";

/** A compaction layer could not make the context smaller; the transcript is untouched. */
export class CompactionFailedError extends UnforgetError {
  /** The layer that failed ("summary", "session-memory", …). */
  readonly layer: string;
  readonly reason: CompactionFailureReason;

  constructor(
    layer: string,
    message: string,
    options?: UnforgetErrorOptions & { reason?: CompactionFailureReason },
  ) {
    super("compaction_failed", message, options);
    this.layer = layer;
    this.reason = options?.reason ?? "summarizer-failed";
  }
}

/**
 * The context is at its limit and the compaction that would make room is switched off. Says which switch
 * and how to proceed; never thrown while that compaction is allowed.
 */
export class CompactionDisabledError extends UnforgetError {
  /** "proactive" (the automatic ladder) or "emergency" (reactive compaction after a prompt-too-long error). */
  readonly switchName: "proactive" | "emergency";
  /** Context size in tokens when the request was refused. */
  readonly tokens: number;

  constructor(
    switchName: "proactive" | "emergency",
    tokens: number,
    message: string,
    options?: UnforgetErrorOptions,
  ) {
    super("compaction_disabled", message, options);
    this.switchName = switchName;
    this.tokens = tokens;
  }
}

/**
 * The context cannot be brought under the model's window: what is left after every compaction (the system
 * prompt and tools, the summary, the newest turn) is still too large, or the provider kept refusing the
 * request after the recoveries of this turn. The message says which, with the sizes; the transcript is intact.
 * One class for the manager and the agent session (which re-exports it), so `instanceof` holds for both.
 */
export class ContextOverflowError extends UnforgetError {
  /** The context's size, in tokens, when it was given up on. */
  readonly tokens: number;
  /** The limit it had to fit (the window, or what the provider said). */
  readonly limitTokens: number;
  /** The size before the reactive compaction that was tried first, when one was (the session sets it). */
  readonly tokensBefore: number | undefined;

  constructor(
    tokens: number,
    limitTokens: number,
    message: string,
    options?: UnforgetErrorOptions & { tokensBefore?: number },
  ) {
    super("context_overflow", message, options);
    this.tokens = tokens;
    this.limitTokens = limitTokens;
    this.tokensBefore = options?.tokensBefore;
  }
}

/** A pin that cannot be made: nothing in the context has that id. The message says where to find ids. */
export class PinNotFoundError extends UnforgetError {
  /** The id asked for. */
  readonly id: string;

  constructor(id: string, message: string, options?: UnforgetErrorOptions) {
    super("pin_not_found", message, options);
    this.id = id;
  }
}

/**
 * A pin refused because the pinned messages would take more than their share of the window
 * (`config.pins.maxShare`). The message says what to do: unpin something, or pin something smaller.
 */
export class PinLimitError extends UnforgetError {
  /** Tokens pinned now. */
  readonly pinnedTokens: number;
  /** Tokens the new pin would add. */
  readonly itemTokens: number;
  /** The most pinned messages may take, in tokens. */
  readonly capTokens: number;

  constructor(
    pinnedTokens: number,
    itemTokens: number,
    capTokens: number,
    message: string,
    options?: UnforgetErrorOptions,
  ) {
    super("pin_limit", message, options);
    this.pinnedTokens = pinnedTokens;
    this.itemTokens = itemTokens;
    this.capTokens = capTokens;
  }
}
