import { UnforgetError } from "@unforget/core";

/**
 * A call the tool cannot carry out, for a reason the model can act on (a file not read yet, an `old_string`
 * that is not unique, a binary file): the message becomes the error result, and says what to do instead.
 */
export class ToolCallError extends UnforgetError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("tool_call", message, options);
  }
}

/** An option given to a tool factory cannot be used; the message names the option and what it accepts. */
export class ToolsConfigurationError extends UnforgetError {
  /** The option, as its key in the options object (e.g. `maxTimeoutMs`). */
  readonly option: string;

  constructor(message: string, details: { option: string; cause?: unknown }) {
    super("tools_configuration", message, { cause: details.cause });
    this.option = details.option;
  }
}

/** Throws `ToolsConfigurationError` unless `value` is absent or a whole number ≥ `min`. */
export function checkWholeNumberOption(value: unknown, option: string, min = 1): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new ToolsConfigurationError(`${option} must be a whole number ≥ ${min}; got ${String(value)}.`, {
      option,
    });
  }
}
