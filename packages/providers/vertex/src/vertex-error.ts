import { ClientError, GoogleAuthError, GoogleGenerativeAIError } from "@google-cloud/vertexai";
import {
  ConfigurationError,
  type PromptTooLongDetails,
  PromptTooLongError,
  ProviderRequestError,
  RequestTooLargeError,
  type UnforgetError,
} from "@unforget/core";
import {
  describeError,
  type ErrorContext,
  parsePromptTooLongMessage,
  unexpectedResponseError,
} from "@unforget/provider-runtime";
import { isRecord } from "./is-record.ts";

export const VERTEX_PROVIDER_ID = "vertex";

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504, 529]);
const TLS_ERROR_CODES: ReadonlySet<string> = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "ERR_SSL_WRONG_VERSION_NUMBER",
]);

/** A Google API error body (`{error: {...}}`), as the REST API and mid-stream error chunks carry it. */
export interface GoogleErrorPayload {
  code?: number;
  message?: string;
  status?: string;
  details?: unknown[];
}

/**
 * Turns anything the Vertex SDK (or a stream error chunk) throws into a typed Unforget error:
 * overflow wordings → `PromptTooLongError` with the numbers from the message, the payload-size limit →
 * `RequestTooLargeError`, authentication → `ConfigurationError`, everything else → `ProviderRequestError`
 * with the HTTP status, `retryable` for 408/429/5xx and network failures, and `retryAfterMs` from a
 * `google.rpc.RetryInfo` detail (the SDK hides response headers, so `retry-after` itself is not visible).
 */
export function toVertexError(error: unknown, context: ErrorContext): UnforgetError {
  const source: PromptTooLongDetails["source"] =
    context.phase === "stream" ? "stream-error" : "error-response";
  if (error instanceof GoogleAuthError) {
    return new ConfigurationError(
      "Vertex AI could not obtain a Google access token. Run `gcloud auth application-default login`, set " +
        "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or pass `accessToken` / `googleAuthOptions`.",
      { setting: "googleAuthOptions", cause: error },
    );
  }
  if (error instanceof ClientError) {
    const api = error.cause;
    if (isRecord(api) && (typeof api.code === "number" || typeof api.message === "string")) {
      return fromPayload(
        {
          code: typeof api.code === "number" ? api.code : undefined,
          message: typeof api.message === "string" ? api.message : error.message,
          status: typeof api.status === "string" ? api.status : undefined,
          details: Array.isArray(api.errorDetails) ? api.errorDetails : undefined,
        },
        source,
        error,
      );
    }
    // Raised by the SDK itself before sending (invalid headers, tool settings): not retryable.
    return new ProviderRequestError(`Vertex AI rejected the request before sending it: ${error.message}`, {
      providerId: VERTEX_PROVIDER_ID,
      retryable: false,
      providerErrorType: "client_error",
      cause: error,
    });
  }
  if (error instanceof GoogleGenerativeAIError) return fromGenerativeError(error);
  if (error instanceof SyntaxError) {
    // The SDK hides the response; JSON.parse's message quotes the body's first bytes, which tell what it was.
    const quoted = /^Unexpected token .*?, "(.*)"(?:\.\.\.)? is not valid JSON$/s.exec(error.message)?.[1];
    if (quoted !== undefined) return unexpected(quoted, "a JSON response", error);
    return malformed(`Vertex AI answered with a body that is not valid JSON (${error.message}).`, error);
  }
  if (
    errorCode(error) !== undefined ||
    (error instanceof TypeError && /fetch failed|terminated|socket|network/i.test(error.message))
  ) {
    return network(error);
  }
  return new ProviderRequestError(`Vertex AI request failed: ${String(error)}`, {
    providerId: VERTEX_PROVIDER_ID,
    retryable: false,
    cause: error,
  });
}

/** Classifies a Google error payload (HTTP error body or a stream error chunk). */
export function fromPayload(
  payload: GoogleErrorPayload,
  source: PromptTooLongDetails["source"],
  cause: unknown,
): UnforgetError {
  const message = payload.message ?? "unknown error";
  const status = payload.code;
  const overflow = status === 400 || status === undefined ? parsePromptTooLongMessage(message) : undefined;
  if (overflow) {
    return new PromptTooLongError(
      `Vertex AI rejected the prompt as too long: ${message} Compact the conversation (remove at least ` +
        `${overflow.actualTokens !== undefined && overflow.limitTokens !== undefined ? overflow.actualTokens - overflow.limitTokens : "some"} tokens) and retry.`,
      { providerId: VERTEX_PROVIDER_ID, ...overflow, source, cause },
    );
  }
  if (/payload size exceeds the limit/i.test(message)) {
    return new RequestTooLargeError(
      `Vertex AI rejected the request body as too large: ${message} Send large images or documents as ` +
        "Cloud Storage URLs (fileData) instead of inline base64, or drop some of them.",
      { providerId: VERTEX_PROVIDER_ID, ...(status === undefined ? {} : { status }), cause },
    );
  }
  const retryable = status === undefined ? false : RETRYABLE_STATUSES.has(status);
  const retryAfterMs = retryDelayFromDetails(payload.details);
  return new ProviderRequestError(
    `Vertex AI request failed with ${status ?? "an error"}${payload.status ? ` ${payload.status}` : ""}: ${message}${hint(status)}`,
    {
      providerId: VERTEX_PROVIDER_ID,
      ...(status === undefined ? {} : { status }),
      retryable,
      ...(payload.status === undefined ? {} : { providerErrorType: payload.status }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      cause,
    },
  );
}

function hint(status: number | undefined): string {
  if (status === 401 || status === 403) {
    return " Check the credentials (ADC or service account), that the Vertex AI API is enabled and that the principal has roles/aiplatform.user.";
  }
  if (status === 404)
    return " Check the model id, the project and the location (not every model is served in every region).";
  if (status === 429) return " The quota is exhausted; retry later or request more quota.";
  return "";
}

/** `google.rpc.RetryInfo.retryDelay` ("1.5s") in milliseconds. */
function retryDelayFromDetails(details: unknown[] | undefined): number | undefined {
  for (const detail of details ?? []) {
    if (!isRecord(detail) || typeof detail.retryDelay !== "string") continue;
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim())?.[1];
    if (seconds !== undefined) return Math.round(Number(seconds) * 1000);
  }
  return undefined;
}

// The SDK throws GoogleGenerativeAIError for 5xx ("got status: 503 Service Unavailable. {json}"), for
// transport failures ("exception posting request", the fetch error as cause) and for unparseable streams.
function fromGenerativeError(error: GoogleGenerativeAIError): UnforgetError {
  const statusMatch = /got status: (\d{3})[^.]*\.\s*(.*)$/s.exec(error.message);
  if (statusMatch?.[1] !== undefined) {
    const status = Number(statusMatch[1]);
    let payload: GoogleErrorPayload = { code: status, message: error.message };
    try {
      const body = JSON.parse(statusMatch[2] ?? "") as unknown;
      if (isRecord(body) && isRecord(body.error)) {
        payload = {
          code: status,
          message: typeof body.error.message === "string" ? body.error.message : error.message,
          ...(typeof body.error.status === "string" ? { status: body.error.status } : {}),
          ...(Array.isArray(body.error.details) ? { details: body.error.details } : {}),
        };
      }
    } catch {
      // Keep the SDK's message.
    }
    return fromPayload(payload, "error-response", error);
  }
  // What is left once no `data:` line matched: a body that is not an event stream at all (HTML, JSON, …).
  const left = /Failed to parse final chunk of stream: (.*)$/s.exec(error.message)?.[1];
  if (left !== undefined && !/^\s*data:/.test(left)) return unexpected(left, "an event stream", error);
  if (
    /parsing JSON response from stream chunk|Failed to parse final chunk|aggregating stream chunks/i.test(
      error.message,
    )
  ) {
    return malformed(`Vertex AI sent a stream that is not valid (${error.message}).`, error);
  }
  if (error.cause !== undefined) return network(error.cause, error);
  return new ProviderRequestError(`Vertex AI request failed: ${error.message}`, {
    providerId: VERTEX_PROVIDER_ID,
    retryable: false,
    cause: error,
  });
}

/** A 200 whose body is not what the call expects; the SDK hides its content type, so its first bytes tell. */
function unexpected(body: string, expected: string, cause: unknown): ProviderRequestError {
  return unexpectedResponseError(
    { providerId: VERTEX_PROVIDER_ID, displayName: "Vertex AI" },
    { contentType: undefined, body, expected, cause },
  );
}

function malformed(message: string, cause: unknown): ProviderRequestError {
  return new ProviderRequestError(
    `${message} The response was discarded; retrying may help if the proxy or server was interrupted.`,
    {
      providerId: VERTEX_PROVIDER_ID,
      retryable: false,
      providerErrorType: "malformed_response",
      cause,
    },
  );
}

function network(cause: unknown, wrapper: unknown = cause): UnforgetError {
  const code = errorCode(cause);
  if (code !== undefined && TLS_ERROR_CODES.has(code)) {
    return new ConfigurationError(
      `The TLS connection to the Vertex AI endpoint failed (${code}). The SDK always uses https://: for a local ` +
        "fake, start Node with NODE_EXTRA_CA_CERTS pointing at the fake's CA certificate; for a proxy, trust its CA the same way.",
      { setting: "baseURL", cause: wrapper },
    );
  }
  return new ProviderRequestError(
    `Could not reach Vertex AI${code ? ` (${code})` : ""}: ${describeError(cause)}. Check the network and the baseURL setting.`,
    { providerId: VERTEX_PROVIDER_ID, retryable: true, providerErrorType: "network_error", cause: wrapper },
  );
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; isRecord(current) && depth < 5; depth++) {
    if (typeof current.code === "string") return current.code;
    current = current.cause;
  }
  return undefined;
}
