import { type CountTokensRequest, InvalidMessageError, normalizeContent } from "@unforget/core";
import { describeValue, findUnknownKey, meantKey } from "./known-keys.ts";

/** Every field a `ModelRequest` has; a count takes the same request. */
const REQUEST_FIELDS: readonly string[] = [
  "model",
  "system",
  "messages",
  "tools",
  "toolChoice",
  "maxTokens",
  "temperature",
  "topP",
  "stopSequences",
  "thinking",
  "contextManagement",
  "providerOptions",
];

/**
 * The request as the contract types it, for callers no type checker saw (plain JavaScript, JSON from
 * elsewhere): a string as a message's content becomes a text block, as every other SDK takes it, and a
 * field the request does not have is refused with the name it was probably meant to be, rather than
 * dropped. Returns the request itself when nothing needed changing.
 */
export function checkRequest<Request extends CountTokensRequest>(request: Request): Request {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new InvalidMessageError("A model request must be an object: { model, messages, maxTokens, … }.");
  }
  const unknown = findUnknownKey(request, REQUEST_FIELDS);
  if (unknown !== undefined) throw unknownField(unknown);
  const messages: unknown = request.messages;
  if (!Array.isArray(messages)) {
    throw new InvalidMessageError(
      `request.messages must be an array of { role, content } messages; it is ${describeValue(messages)}.`,
    );
  }
  let changed = false;
  const checked = messages.map((message: unknown, index) => {
    const content = (message as { content?: unknown } | null)?.content;
    if (typeof content === "string") {
      changed = true;
      return { ...(message as object), content: normalizeContent(content) };
    }
    if (!Array.isArray(content)) {
      throw new InvalidMessageError(
        `messages[${index}].content must be a string or an array of content blocks; it is ${describeValue(content)}.`,
      );
    }
    return message;
  });
  return changed ? { ...request, messages: checked } : request;
}

function unknownField(key: string): InvalidMessageError {
  const meant = meantKey(key, REQUEST_FIELDS);
  const hint =
    meant === undefined
      ? `The fields are ${REQUEST_FIELDS.join(", ")}.`
      : `Did you mean "${meant}"? Request fields are camelCase.`;
  return new InvalidMessageError(
    `The request has no field "${key}", so it would be ignored. ${hint} Fields of one provider's API go in providerOptions.<provider id>.`,
  );
}
