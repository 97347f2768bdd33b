/**
 * Every error Unforget throws across a package boundary is an `UnforgetError`: it has a stable
 * machine-readable `code`, a message that says what happened and what to do, and the standard `cause`.
 */
export type UnforgetErrorCode = CoreErrorCode | (string & Record<never, never>);

/**
 * The codes core's own errors use. Other packages add their own codes (snake_case, prefixed by their area,
 * e.g. "memory_conflict"); a code never changes once published.
 */
export type CoreErrorCode =
  | "prompt_too_long"
  | "request_too_large"
  | "provider_request"
  | "invalid_message"
  | "configuration"
  | "aborted"
  | "invalid_operation";

export interface UnforgetErrorOptions {
  cause?: unknown;
}

export class UnforgetError extends Error {
  /** Stable identifier for programmatic handling; never changes between versions. */
  readonly code: UnforgetErrorCode;

  constructor(code: UnforgetErrorCode, message: string, options?: UnforgetErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

export function isUnforgetError(value: unknown): value is UnforgetError {
  return value instanceof UnforgetError;
}

export interface PromptTooLongDetails {
  /** Provider that rejected the prompt (e.g. "anthropic", "bedrock", "vertex"). */
  providerId?: string;
  /** Tokens the provider says the prompt had, when it said so. */
  actualTokens?: number;
  /** The maximum the provider enforced, when it said so (may be a regional cap, not the model window). */
  limitTokens?: number;
  /** How the overflow was signalled. */
  source?: "error-response" | "stop-reason" | "stream-error";
  cause?: unknown;
}

/**
 * The prompt does not fit the model's context window. This is the trigger for reactive compaction.
 * `tokenGap` is how many tokens must be removed, when the provider told us both numbers.
 */
export class PromptTooLongError extends UnforgetError {
  readonly providerId: string | undefined;
  readonly actualTokens: number | undefined;
  readonly limitTokens: number | undefined;
  readonly tokenGap: number | undefined;
  readonly source: PromptTooLongDetails["source"];

  constructor(message: string, details: PromptTooLongDetails = {}) {
    super("prompt_too_long", message, { cause: details.cause });
    this.providerId = details.providerId;
    this.actualTokens = details.actualTokens;
    this.limitTokens = details.limitTokens;
    this.source = details.source;
    this.tokenGap =
      details.actualTokens !== undefined && details.limitTokens !== undefined
        ? Math.max(0, details.actualTokens - details.limitTokens)
        : undefined;
  }
}

/**
 * The request body exceeded the provider's byte limit (Anthropic 413 `request_too_large`). Distinct from
 * a token overflow: removing tokens may not help; large images or documents usually are the cause.
 */
export class RequestTooLargeError extends UnforgetError {
  readonly providerId: string | undefined;
  readonly status: number | undefined;

  constructor(message: string, details: { providerId?: string; status?: number; cause?: unknown } = {}) {
    super("request_too_large", message, { cause: details.cause });
    this.providerId = details.providerId;
    this.status = details.status;
  }
}

export interface ProviderRequestDetails {
  providerId: string;
  status?: number;
  retryable: boolean;
  /** Provider-specific error type (e.g. "overloaded_error", "ThrottlingException"). */
  providerErrorType?: string;
  /** Milliseconds the provider asked us to wait, if it said. */
  retryAfterMs?: number;
  cause?: unknown;
}

/** A provider call failed for a reason other than context overflow. */
export class ProviderRequestError extends UnforgetError {
  readonly providerId: string;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly providerErrorType: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ProviderRequestDetails) {
    super("provider_request", message, { cause: details.cause });
    this.providerId = details.providerId;
    this.status = details.status;
    this.retryable = details.retryable;
    this.providerErrorType = details.providerErrorType;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** A message or content block does not have the shape the message model requires. */
export class InvalidMessageError extends UnforgetError {
  constructor(message: string, options?: UnforgetErrorOptions) {
    super("invalid_message", message, options);
  }
}

/** Configuration is missing or contradictory; the message names the setting and how to fix it. */
export class ConfigurationError extends UnforgetError {
  readonly setting: string | undefined;

  constructor(message: string, details: { setting?: string; cause?: unknown } = {}) {
    super("configuration", message, { cause: details.cause });
    this.setting = details.setting;
  }
}

/** The operation was cancelled through an AbortSignal. */
export class AbortedError extends UnforgetError {
  constructor(message = "The operation was aborted.", options?: UnforgetErrorOptions) {
    super("aborted", message, options);
  }
}

/** An API was used in a way it does not support (e.g. iterating a stream twice). */
export class InvalidOperationError extends UnforgetError {
  constructor(message: string, options?: UnforgetErrorOptions) {
    super("invalid_operation", message, options);
  }
}
