import type { Message } from "@unforget/core";
import { NOTES_KEEP_MAX_TOKENS, NOTES_KEEP_MIN_TEXT_MESSAGES, NOTES_KEEP_MIN_TOKENS } from "../defaults.ts";
import { estimateTokens, isToolOutputMessage } from "./conversation.ts";

export interface KeepWindowOptions {
  /** Keep at least this many tokens; default 10,000. */
  minTokens?: number;
  /** Keep at least this many messages that carry text; default 5. */
  minTextMessages?: number;
  /** Never keep more than this many tokens (the pair-safety adjustment may exceed it by one round); default 40,000. */
  maxTokens?: number;
  /** Never keep anything before this index (the latest compact boundary's start); default 0. */
  floor?: number;
  /** Start counting from here: messages at or after it are kept whatever the budgets; default the end. */
  from?: number;
  /** Token estimate of one message; default the calibrated heuristic. */
  estimate?: (message: Message) => number;
}

/**
 * Where the verbatim tail of a compaction starts: from `from` (the first message the summary does not
 * cover), expanded backwards until it holds `minTokens` and `minTextMessages`, or until `maxTokens`, never
 * past `floor`; then moved back so that it splits no tool_use from its tool_result and no response whose
 * parallel calls were split into several messages (they share a response id, and thinking blocks with them).
 */
export function calculateKeepStart(messages: readonly Message[], options: KeepWindowOptions = {}): number {
  const minTokens = options.minTokens ?? NOTES_KEEP_MIN_TOKENS;
  const minText = options.minTextMessages ?? NOTES_KEEP_MIN_TEXT_MESSAGES;
  const maxTokens = options.maxTokens ?? NOTES_KEEP_MAX_TOKENS;
  const floor = Math.max(0, Math.min(options.floor ?? 0, messages.length));
  const estimate = options.estimate ?? ((message: Message) => estimateTokens([message]));
  let start = Math.max(floor, Math.min(options.from ?? messages.length, messages.length));
  let tokens = 0;
  let texts = 0;
  for (let index = start; index < messages.length; index++) {
    tokens += estimate(messages[index]!);
    if (hasText(messages[index]!)) texts++;
  }
  const satisfied = () => tokens >= maxTokens || (tokens >= minTokens && texts >= minText);
  while (!satisfied() && start > floor) {
    const message = messages[start - 1]!;
    const size = estimate(message);
    if (tokens + size > maxTokens && tokens >= minTokens) break;
    start--;
    tokens += size;
    if (hasText(message)) texts++;
  }
  return adjustForPairs(messages, start, floor);
}

function hasText(message: Message): boolean {
  return message.content.some((block) => block.type === "text" && block.text.trim().length > 0);
}

/**
 * Moves `start` back until every tool_result at or after it has its tool_use at or after it, and no
 * response (assistant messages sharing a response id) is split. Never goes below `floor`.
 */
export function adjustForPairs(messages: readonly Message[], start: number, floor = 0): number {
  let index = start;
  for (;;) {
    const before = index;
    const needed = new Set<string>();
    for (let position = index; position < messages.length; position++) {
      const message = messages[position]!;
      if (message.role !== "user") continue;
      for (const block of message.content) if (block.type === "tool_result") needed.add(block.tool_use_id);
    }
    for (let position = index; position < messages.length; position++) {
      const message = messages[position]!;
      if (message.role !== "assistant") continue;
      for (const block of message.content) if (block.type === "tool_use") needed.delete(block.id);
    }
    while (needed.size > 0 && index > floor) {
      index--;
      const message = messages[index]!;
      if (message.role === "assistant") {
        for (const block of message.content) if (block.type === "tool_use") needed.delete(block.id);
      }
    }
    // An observation message needs the action (assistant message) before it.
    if (index > floor && isToolOutputMessage(messages[index]) && messages[index - 1]?.role === "assistant")
      index--;
    const responseId = messages[index]?.role === "assistant" ? messages[index]?.responseId : undefined;
    while (responseId !== undefined && index > floor) {
      const previous = messages[index - 1]!;
      if (previous.role === "assistant" && previous.responseId === responseId) index--;
      else if (
        previous.role === "user" &&
        isToolOutputMessage(previous) &&
        messages[index - 2]?.responseId === responseId
      )
        index -= 2;
      else break;
    }
    if (index === before) return index;
  }
}
