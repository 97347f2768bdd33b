import { ProviderRequestError } from "@unforget/core";

/** How many characters of an unexpected body a message quotes. */
const QUOTED_CHARACTERS = 160;

/** Who answered: the provider as messages name it. */
interface Answerer {
  providerId: string;
  displayName: string;
}

/** What came back instead of the answer. */
export interface UnexpectedResponse {
  /** The `content-type` of the answer; undefined when the SDK hides it (the body's first bytes then tell). */
  contentType: string | undefined;
  /** The body, or its first bytes. */
  body: string;
  /** What the call expected, in words ("a Messages API response", "an event stream"). */
  expected: string;
  /** What the SDK threw on it, when it did. */
  cause?: unknown;
}

/**
 * A 200 whose body is not an answer: a gateway's HTML page, the other format, something else entirely. It
 * is never retried (the same server will answer the same), and the message quotes what came back so the
 * cause shows at once. `providerErrorType` is "unexpected_response".
 */
export function unexpectedResponseError(
  answerer: Answerer,
  response: UnexpectedResponse,
): ProviderRequestError {
  // Binary bodies (an event stream where JSON was expected) are quoted with their control bytes as dots.
  const printable = response.body
    .replace(/\s+/g, " ")
    .replace(/[\p{Cc}\ufffd]/gu, "·")
    .trim();
  const quoted = printable.slice(0, QUOTED_CHARACTERS);
  const more = printable.length > QUOTED_CHARACTERS ? "…" : "";
  const what =
    response.contentType === undefined
      ? `what looks like ${kindOfBody(response.body)}`
      : response.contentType;
  return new ProviderRequestError(
    `${answerer.displayName} answered 200 with ${what} instead of ${response.expected}: "${quoted}${more}". A proxy, a gateway's sign-in page or a wrong base URL usually does this: check baseURL and that the server speaks this API.`,
    {
      providerId: answerer.providerId,
      status: 200,
      retryable: false,
      providerErrorType: "unexpected_response",
      ...(response.cause === undefined ? {} : { cause: response.cause }),
    },
  );
}

/**
 * A stream that ended before its end-of-message event: the answer is incomplete. Retryable, which the
 * runtime honours only before the first event reached the caller.
 */
export function truncatedStreamError(answerer: Answerer, delivered: number): ProviderRequestError {
  const when = delivered === 0 ? "before its first event" : `after ${delivered} events, before its end`;
  return new ProviderRequestError(
    `${answerer.displayName}: the stream ended ${when}; the connection closed early and the answer is incomplete. Send the request again.`,
    { providerId: answerer.providerId, retryable: true, providerErrorType: "truncated_stream" },
  );
}

/** The kind of a body by its first bytes, for SDKs that hide response headers. */
function kindOfBody(body: string): string {
  const start = body.trimStart();
  if (/^<(?:!doctype|html|head|body)/i.test(start)) return "text/html";
  if (/^(?:data|event|id|retry):/.test(start)) return "an event stream (text/event-stream)";
  if (/^[[{]/.test(start)) return "JSON (application/json)";
  return "something else";
}
