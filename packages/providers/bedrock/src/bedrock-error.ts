import {
  PromptTooLongError,
  ProviderRequestError,
  RequestTooLargeError,
  type UnforgetError,
} from "@unforget/core";
import { type ErrorContext, parsePromptTooLongMessage, parseRetryAfter } from "@unforget/provider-runtime";

export const BEDROCK_PROVIDER_ID = "bedrock";

/** Exceptions worth another attempt: throttling, capacity and transient server faults. */
const RETRYABLE_EXCEPTIONS: ReadonlySet<string> = new Set([
  "ThrottlingException",
  "ServiceUnavailableException",
  "InternalServerException",
  "ModelNotReadyException",
  "ModelTimeoutException",
  "ModelStreamErrorException",
  "TooManyRequestsException",
]);

const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENOTFOUND",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_HTTP2_SESSION_ERROR",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_ERROR",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_HTTP2_INVALID_SESSION",
]);

interface SdkErrorShape {
  name?: string;
  message?: string;
  code?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number; requestId?: string };
  $response?: { statusCode?: number; headers?: Record<string, string> };
}

/**
 * Turns anything the SDK (or the transport under it) throws into an `UnforgetError`: prompt-too-long in
 * both ValidationException wordings → `PromptTooLongError`, 413 → `RequestTooLargeError`, everything else
 * → `ProviderRequestError` marked retryable for throttling, capacity, 5xx and network failures.
 */
export function toBedrockError(error: unknown, context: ErrorContext): UnforgetError {
  const shape = (typeof error === "object" && error !== null ? error : {}) as SdkErrorShape;
  const name = shape.name ?? "Error";
  const message = shape.message ?? String(error);
  const status = shape.$metadata?.httpStatusCode ?? shape.$response?.statusCode;
  const retryAfterMs = parseRetryAfter(shape.$response?.headers);

  if (name === "ValidationException" || name === "validationException" || status === 400) {
    const numbers = parsePromptTooLongMessage(message);
    if (numbers !== undefined) {
      const said =
        numbers.actualTokens !== undefined && numbers.limitTokens !== undefined
          ? ` (${numbers.actualTokens} tokens > ${numbers.limitTokens} maximum)`
          : " (Bedrock did not say by how much; count the prompt to find out)";
      return new PromptTooLongError(
        `Bedrock rejected the prompt as too long${said}: ${message}. Compact the conversation and retry.`,
        {
          providerId: BEDROCK_PROVIDER_ID,
          ...numbers,
          source: context.phase === "stream" ? "stream-error" : "error-response",
          cause: error,
        },
      );
    }
  }

  if (status === 413) {
    return new RequestTooLargeError(
      `Bedrock rejected the request body as too large (HTTP 413: ${message}). Shrink or drop large images, documents or tool results; summarising text will not help.`,
      { providerId: BEDROCK_PROVIDER_ID, status, cause: error },
    );
  }

  const code = shape.code ?? (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  const isNetwork =
    status === undefined &&
    ((code !== undefined && NETWORK_ERROR_CODES.has(code)) ||
      name === "TimeoutError" ||
      /socket hang up|ECONNRESET|ECONNREFUSED|HTTP\/2|http2|Protocol error/i.test(message));
  const retryable =
    RETRYABLE_EXCEPTIONS.has(name) ||
    RETRYABLE_EXCEPTIONS.has(upperFirst(name)) ||
    (status !== undefined && (status === 429 || status === 529 || status >= 500)) ||
    isNetwork;

  const what = status === undefined ? name : `${name} (HTTP ${status})`;
  const advice = retryable
    ? "It is transient; it was retried as far as maxRetries allows. Try again later or raise maxRetries."
    : adviceFor(name, status);
  return new ProviderRequestError(`Bedrock request failed with ${what}: ${message}. ${advice}`, {
    providerId: BEDROCK_PROVIDER_ID,
    retryable,
    providerErrorType: name,
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: error,
  });
}

function adviceFor(name: string, status: number | undefined): string {
  if (name === "AccessDeniedException" || name === "UnrecognizedClientException" || status === 403) {
    return "Check the AWS credentials or Bedrock API key, and that model access is enabled for this model in this region.";
  }
  if (name === "ResourceNotFoundException" || status === 404) {
    return "Check the model id and region; cross-region inference profiles need their us./eu./apac./global. prefix.";
  }
  if (name === "ServiceQuotaExceededException")
    return "Raise the account's Bedrock quota or wait for it to reset.";
  if (name === "ValidationException") return "Fix the request; sending it again unchanged will fail again.";
  if (name === "CredentialsProviderError") {
    return "Pass credentials or apiKey, or set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or AWS_BEARER_TOKEN_BEDROCK.";
  }
  return "Sending it again unchanged is unlikely to help.";
}

function upperFirst(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
