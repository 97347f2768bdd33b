import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "@unforget/core";
import {
  estimateMessageBreakdown,
  estimateMessagesTokens,
  estimateMessageTokens,
  MAX_COUNTED_TOKENS,
} from "@unforget/tokens";

/** Where a tool call sits in a message list. */
export interface ToolCall {
  use: ToolUseBlock;
  /** Index of the assistant message that made the call. */
  messageIndex: number;
}

/** Every tool_use in a message list, by id. */
export function indexToolUses(messages: readonly Message[]): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  messages.forEach((message, messageIndex) => {
    if (message.role !== "assistant") return;
    for (const block of message.content) {
      if (block.type === "tool_use") calls.set(block.id, { use: block, messageIndex });
    }
  });
  return calls;
}

/** True for a message the user typed: a user message with text, not meta, not a summary, not tool output. */
export function isUserAuthored(message: Message): boolean {
  if (message.role !== "user" || message.isMeta || message.isCompactSummary || message.isObservation)
    return false;
  return message.content.some((block) => block.type === "text" && block.text.trim().length > 0);
}

/** The text a user typed in a user-authored message (its text blocks joined). */
export function userText(message: Message): string {
  return message.content
    .filter((block): block is Extract<ContentBlock, { type: "text" }> => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

/** The text of a tool result, with media blocks as `[image]` / `[document]`. */
export function resultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return block.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

/** Characters of a tool result's text (media blocks count as their marker). */
export function resultChars(block: ToolResultBlock): number {
  if (typeof block.content === "string") return block.content.length;
  let chars = 0;
  for (const part of block.content) chars += part.type === "text" ? part.text.length : 10;
  return chars;
}

/** True when every part of a tool result is text (so it can be written to disk and previewed losslessly). */
export function isTextResult(block: ToolResultBlock): boolean {
  return typeof block.content === "string" || block.content.every((part) => part.type === "text");
}

/**
 * Each message's unrounded estimate, by message object: messages are never changed in place (a layer returns
 * edits, and replacements are new objects), so the prefix a step did not change costs nothing to count again.
 */
const unroundedTokens = new WeakMap<Message, number>();

/** `estimateMessagesTokens`'s per-message term with the default options: the breakdown's sum, capped. */
function messageTokens(message: Message): number {
  const cacheable = typeof message === "object" && message !== null;
  let tokens = cacheable ? unroundedTokens.get(message) : undefined;
  if (tokens === undefined) {
    const parts = estimateMessageBreakdown(message);
    tokens = Math.min(
      parts.contentTokens + parts.thinkingTokens + parts.mediaTokens + parts.overheadTokens,
      MAX_COUNTED_TOKENS,
    );
    if (cacheable) unroundedTokens.set(message, tokens);
  }
  return tokens;
}

/**
 * Unpadded token estimate of messages (the calibrated heuristic; providers are not asked): the same number as
 * `estimateMessagesTokens`, from estimates remembered per message.
 */
export function estimateTokens(messages: readonly Message[]): number {
  if (!Array.isArray(messages)) return estimateMessagesTokens(messages);
  let total = 0;
  for (const message of messages) total += messageTokens(message);
  return toCount(total);
}

/** `estimateMessageTokens` of one message, remembered like `estimateTokens`'s. */
export function estimateOneMessageTokens(message: Message): number {
  return toCount(messageTokens(message));
}

/** An unrounded estimate as a count, as the estimators of `@unforget/tokens` round theirs. */
function toCount(total: number): number {
  if (!(total > 0)) return 0;
  return total >= MAX_COUNTED_TOKENS ? MAX_COUNTED_TOKENS : Math.ceil(total);
}

/** Unpadded token estimate of a plain text, as one user message would carry it. */
export function estimateTextTokens(text: string): number {
  return estimateMessageTokens({ role: "user", content: [{ type: "text", text }] });
}

/** A one-line description of a tool call for records and stubs: `Read(src/a.ts)`, `Bash(npm test)`. */
export function describeToolCall(use: Pick<ToolUseBlock, "name" | "input">, maxChars = 80): string {
  const input = use.input;
  let argument = "";
  if (input && typeof input === "object") {
    const record = input as Record<string, unknown>;
    for (const key of ["file_path", "path", "command", "pattern", "query", "url", "notebook_path", "cmd"]) {
      const value = record[key];
      if (typeof value === "string" && value.length > 0) {
        argument = value;
        break;
      }
    }
    if (!argument) {
      const first = Object.values(record).find((value) => typeof value === "string") as string | undefined;
      argument = first ?? "";
    }
  } else if (typeof input === "string") {
    argument = input;
  }
  return `${use.name}(${clip(oneLine(argument), maxChars)})`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** `text` cut to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * True for an observation sent as plain text (SWE-agent style): a user message marked `isObservation` that
 * carries no tool_result block. Layers replace such a message whole; one with tool results is handled block
 * by block like any tool output.
 */
export function isTextObservation(message: Message): boolean {
  return (
    message.role === "user" &&
    message.isObservation === true &&
    !message.content.some((block) => block.type === "tool_result")
  );
}

/** True when a message has at least one tool_use block. */
export function hasToolUse(message: Message | undefined): boolean {
  return (
    message !== undefined &&
    message.role === "assistant" &&
    message.content.some((block) => block.type === "tool_use")
  );
}

/** True when a user message carries tool results (or is an observation message). */
export function isToolOutputMessage(message: Message | undefined): boolean {
  if (message === undefined || message.role !== "user") return false;
  return message.isObservation === true || message.content.some((block) => block.type === "tool_result");
}
