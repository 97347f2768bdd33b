import { ConfigurationError } from "@unforget/core";

/**
 * The context window is smaller than automatic compaction can work with (`MINIMUM_CONTEXT_WINDOW_TOKENS`).
 * A `ConfigurationError` (code "configuration"), so callers that handle configuration errors handle it too;
 * `setting` names where the window came from: "contextWindow", "windowOverride" or the environment variable.
 */
export class ContextWindowTooSmallError extends ConfigurationError {
  /** The window that was refused, in tokens. */
  readonly contextWindow: number;
  /** The smallest window accepted, in tokens. */
  readonly minimumContextWindow: number;

  constructor(
    message: string,
    details: { setting: string; contextWindow: number; minimumContextWindow: number },
  ) {
    super(message, { setting: details.setting });
    this.contextWindow = details.contextWindow;
    this.minimumContextWindow = details.minimumContextWindow;
  }
}
