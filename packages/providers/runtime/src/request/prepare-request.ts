import type { ContentBlock, CountTokensRequest, ModelRequest, RequestMessage } from "@unforget/core";
import { checkRequest } from "./check-request.ts";

/**
 * What a provider's API does with a thinking block that carries no signature (sessions imported from other
 * tools have them; Claude Code writes some): "drop" — the API rejects them, so the runtime leaves them out
 * of the request before the provider converts it; "keep" — the provider's own thinking is unsigned and its
 * conversion sends such blocks on (Gemini's thought summaries).
 */
export type UnsignedThinkingPolicy = "drop" | "keep";

/**
 * The request without its unsigned thinking blocks (signature absent or empty). They are only the model's
 * earlier reasoning, which the API would not show the model again anyway; the transcript keeps them. A
 * message left empty goes too (its neighbours of the same role are then merged, as the APIs do). Returns
 * the request itself when it has none.
 */
function withoutUnsignedThinking<Request extends PreparedRequest<CountTokensRequest>>(
  request: Request,
): Request {
  if (!request.messages.some(hasUnsignedThinking)) return request;
  const messages: PreparedMessage[] = [];
  for (const message of request.messages) {
    if (!hasUnsignedThinking(message)) {
      messages.push(message);
      continue;
    }
    const content = message.content.filter((block) => !isUnsignedThinking(block));
    if (content.length > 0) messages.push({ ...message, content });
  }
  return { ...request, messages };
}

function hasUnsignedThinking(message: PreparedMessage): boolean {
  return message.content.some(isUnsignedThinking);
}

function isUnsignedThinking(block: ContentBlock): boolean {
  return block.type === "thinking" && (block.signature === undefined || block.signature === "");
}

/** A request message after `prepareRequest`: its content is always blocks. */
export type PreparedMessage = RequestMessage & { content: ContentBlock[] };

/** A request after `prepareRequest`, as a provider's definition receives it: every message's content is blocks. */
export type PreparedRequest<Request extends CountTokensRequest = ModelRequest> = Omit<Request, "messages"> & {
  messages: PreparedMessage[];
};

/**
 * A request as a provider's conversion receives it: checked (`InvalidMessageError` for a field the request
 * does not have), string contents as text blocks, and unsigned thinking dropped when the policy says so. The
 * runtime does this before every call; a provider that exports its conversion does it there too, so what it
 * shows is exactly what it sends. Returns the request itself when nothing needed changing.
 */
export function prepareRequest<Request extends CountTokensRequest>(
  request: Request,
  unsignedThinking: UnsignedThinkingPolicy,
): PreparedRequest<Request> {
  // checkRequest turns every string content into blocks (or throws).
  const checked = checkRequest(request) as unknown as PreparedRequest<Request>;
  return unsignedThinking === "drop" ? withoutUnsignedThinking(checked) : checked;
}
