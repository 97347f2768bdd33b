import { UnforgetError, type UnforgetErrorOptions } from "@unforget/core";

/** A compaction layer could not make the context smaller; the transcript is untouched. */
export class CompactionFailedError extends UnforgetError {
  /** The layer that failed ("full", "session-memory", "reactive", …). */
  readonly layer: string;

  constructor(layer: string, message: string, options?: UnforgetErrorOptions) {
    super("compaction_failed", message, options);
    this.layer = layer;
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
