import type { Message } from "@unforget/core";
import type { ModelMessage } from "ai";
import { decodeModelMessage } from "./decode-model-message.ts";
import { encodeModelMessage } from "./encode-model-message.ts";
import type { ConvertOptions } from "./model-message-parts.ts";

export function fromModelMessages(
  messages: readonly ModelMessage[],
  options: ConvertOptions = {},
): Message[] {
  const report = options.onUnknownShape ?? (() => {});
  return messages.map((message) => decodeModelMessage(message, report));
}

/**
 * Unforget messages as AI SDK messages: the inverse of `fromModelMessages` (its messages come back equal), and
 * for any other Unforget messages (a summary, a cleared result) the AI SDK parts that carry them.
 */
export function toModelMessages(messages: readonly Message[], options: ConvertOptions = {}): ModelMessage[] {
  const report = options.onUnknownShape ?? (() => {});
  const toolNames = new Map<string, string>();
  for (const message of messages)
    for (const block of message.content) if (block.type === "tool_use") toolNames.set(block.id, block.name);
  return messages.flatMap((message) => encodeModelMessage(message, report, toolNames));
}
