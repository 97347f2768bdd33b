import { contentBlocks, LEADING_USER_TEXT, type Message, type RequestMessage } from "@unforget/core";
import { extendRequestMessages } from "@unforget/transcript";

export interface SlidingWindowReferenceOptions {
  /** The window: the oldest messages are dropped until the request fits it. */
  window: number;
  /** Tokens of the system prompt and tools, sent with every request. */
  preambleTokens: number;
  /** Counts one request message (the replay's counter, so both sides count alike). */
  countMessage: (message: RequestMessage) => number;
  /** Prices one request, in dollars, against the reference's own prompt cache. */
  bill: (messages: RequestMessage[], time: number) => number;
}

/** The cost of sending a conversation with no compaction at all. */
export interface SlidingWindowReference {
  /** Called at each call with the whole conversation so far: the dollars of that call's request. */
  bill(history: readonly Message[], time: number): number;
}

const LEADING_USER: RequestMessage = Object.freeze({
  role: "user",
  content: [{ type: "text", text: LEADING_USER_TEXT }],
}) as RequestMessage;

/**
 * The reference every replay is priced against: everything is sent until the window is full, then the
 * oldest messages are dropped until the request fits, starting at a message the request may start with (a
 * user message with no tool results, or an assistant message after a stand-in user line), so no tool pair is
 * broken. It can always be sent and needs no ladder; it forgets the oldest work, and once the window is full
 * its prefix moves on every call, so the prompt cache is rewritten each time.
 */
export function createSlidingWindowReference(options: SlidingWindowReferenceOptions): SlidingWindowReference {
  let request: RequestMessage[] = [];
  let seen = 0;
  let start = 0;
  return {
    bill(history, time) {
      request = extendRequestMessages(request, history.slice(seen));
      seen = history.length;
      let tokens = options.preambleTokens;
      for (let index = start; index < request.length; index++)
        tokens += options.countMessage(request[index]!);
      while (
        start < request.length - 1 &&
        (tokens > options.window || (start > 0 && !canStart(request[start]!)))
      ) {
        tokens -= options.countMessage(request[start]!);
        start++;
      }
      const kept = request.slice(start);
      return options.bill(kept[0]?.role === "assistant" ? [LEADING_USER, ...kept] : kept, time);
    },
  };
}

/** A request may start here: an assistant message, or a user message that answers no dropped call. */
function canStart(message: RequestMessage): boolean {
  return (
    message.role === "assistant" ||
    !contentBlocks(message.content).some((block) => block.type === "tool_result")
  );
}
