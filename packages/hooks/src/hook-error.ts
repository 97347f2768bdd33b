import { UnforgetError } from "@unforget/core";

/** A plugin tap or hook command failed. Observer failures are reported with it and the session goes on. */
export class HookError extends UnforgetError {
  /** Bus property name of the hook ("preCompact", …). */
  readonly hook: string;
  /** Plugin name (tap name) or hook command that failed. */
  readonly handler: string;

  constructor(message: string, details: { hook: string; handler: string; cause?: unknown }) {
    super("hook_failed", message, { cause: details.cause });
    this.hook = details.hook;
    this.handler = details.handler;
  }
}

/** A hook settings file could not be used; the file is skipped, the others still load. */
export class HookSettingsError extends UnforgetError {
  readonly path: string;

  constructor(message: string, details: { path: string; cause?: unknown }) {
    super("configuration", message, { cause: details.cause });
    this.path = details.path;
  }
}
