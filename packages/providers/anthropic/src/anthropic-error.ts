import { APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import {
  AbortedError,
  ConfigurationError,
  PromptTooLongError,
  ProviderRequestError,
  RequestTooLargeError,
  type UnforgetError,
} from "@unforget/core";
import {
  describeError,
  type ErrorContext,
  parsePromptTooLongMessage,
  parseRetryAfter,
} from "@unforget/provider-runtime";

export const ANTHROPIC_PROVIDER_ID = "anthropic";

const RETRYABLE_TYPES: ReadonlySet<string> = new Set([
  "overloaded_error",
  "api_error",
  "rate_limit_error",
  "timeout_error",
]);

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Turns anything the SDK throws into an `UnforgetError`: prompt overflows (400 or a mid-stream `error`
 * frame) become `PromptTooLongError` with the numbers the message carries, 413 becomes
 * `RequestTooLargeError`, everything else a `ProviderRequestError` whose `retryable` follows the retry
 * policy (408/409/429/5xx/529, overloaded frames, network failures).
 */
export function toAnthropicError(error: unknown, context: ErrorContext): UnforgetError {
  if (error instanceof APIUserAbortError) {
    return new AbortedError("The Anthropic request was aborted; nothing more will be sent.", {
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    // What failed underneath ("connect ECONNREFUSED 127.0.0.1:9"): the SDK's own message is only "Connection error.".
    const cause = rootCause(error);
    return new ProviderRequestError(
      `Could not reach the Anthropic API (${error.message.replace(/\.$/, "")}${cause ? `: ${cause}` : ""}). Check the network and the base URL (baseURL, ANTHROPIC_BASE_URL).`,
      {
        providerId: ANTHROPIC_PROVIDER_ID,
        retryable: true,
        providerErrorType: "connection_error",
        cause: error,
      },
    );
  }
  if (error instanceof APIError) {
    const status = error.status as number | undefined;
    const type: string | undefined = error.type ?? undefined;
    const apiMessage = error.apiMessage ?? error.message;
    if (status === 413 || type === "request_too_large") {
      return new RequestTooLargeError(
        `The Anthropic API rejected the request body as too large (413 request_too_large: ${apiMessage}). This limit is in bytes, not tokens: shrink or drop large images, documents or tool results instead of summarising.`,
        { providerId: ANTHROPIC_PROVIDER_ID, status: 413, cause: error },
      );
    }
    if (status === 400 || (status === undefined && type === "invalid_request_error")) {
      const overflow = parsePromptTooLongMessage(apiMessage);
      if (overflow) {
        return new PromptTooLongError(
          `The prompt does not fit the model's context window (${apiMessage}). Compact the conversation and retry.`,
          {
            providerId: ANTHROPIC_PROVIDER_ID,
            ...overflow,
            source: status === undefined || context.phase === "stream" ? "stream-error" : "error-response",
            cause: error,
          },
        );
      }
    }
    if (status === 401 || status === 403) {
      return new ProviderRequestError(
        `The Anthropic API refused the credentials (${status} ${type ?? "error"}: ${apiMessage}). Set ANTHROPIC_API_KEY (or pass apiKey / authToken) to a valid key.`,
        {
          providerId: ANTHROPIC_PROVIDER_ID,
          status,
          retryable: false,
          ...(type ? { providerErrorType: type } : {}),
          cause: error,
        },
      );
    }
    const retryable = status === undefined ? RETRYABLE_TYPES.has(type ?? "") : isRetryableStatus(status);
    const retryAfterMs = parseRetryAfter(error.headers);
    return new ProviderRequestError(
      `The Anthropic API request failed (${status ?? "stream error"} ${type ?? "error"}: ${apiMessage}). ${
        retryable
          ? "It is transient; retries were exhausted, try again later."
          : "Fix the request; retrying will not help."
      }`,
      {
        providerId: ANTHROPIC_PROVIDER_ID,
        retryable,
        ...(status === undefined ? {} : { status }),
        ...(type ? { providerErrorType: type } : {}),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        cause: error,
      },
    );
  }
  if (error instanceof SyntaxError) {
    return new ProviderRequestError(
      `The Anthropic API answered with a body that is not valid JSON (${error.message}). If baseURL points to a proxy or compatible server, check that it speaks the Messages API.`,
      {
        providerId: ANTHROPIC_PROVIDER_ID,
        retryable: false,
        providerErrorType: "malformed_response",
        cause: error,
      },
    );
  }
  const message = describeError(error);
  if (/Could not resolve authentication method/i.test(message)) return missingCredentials(error);
  return new ProviderRequestError(`The Anthropic request failed unexpectedly (${message}).`, {
    providerId: ANTHROPIC_PROVIDER_ID,
    retryable: false,
    cause: error,
  });
}

/** The API needs a key or a token and neither was given nor found in the environment. */
export function missingCredentials(cause?: unknown): ConfigurationError {
  return new ConfigurationError(
    "No Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or pass apiKey to createAnthropicProvider().",
    { setting: "ANTHROPIC_API_KEY", ...(cause === undefined ? {} : { cause }) },
  );
}

/** The message of the innermost cause, when it says more than the error itself. */
function rootCause(error: Error): string | undefined {
  let current: unknown = error.cause;
  let message: string | undefined;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    message = current.message;
    current = current.cause;
  }
  return message === undefined || message === "" || message === error.message ? undefined : message;
}
