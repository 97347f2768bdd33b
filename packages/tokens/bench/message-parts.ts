// The strings the estimator counts for a message, so reference tokenizers can count exactly the same text.
import { type ContentBlock, contentBlocks, type RequestMessage } from "@unforget/core";

function addParts(block: ContentBlock, parts: string[]): void {
  switch (block.type) {
    case "text":
      parts.push(block.text);
      return;
    case "tool_use":
      parts.push(block.name, JSON.stringify(block.input) ?? "");
      return;
    case "tool_result":
      if (typeof block.content === "string") parts.push(block.content);
      else for (const part of block.content) addParts(part, parts);
      return;
    case "thinking":
      parts.push(block.thinking);
      return;
    case "redacted_thinking":
      parts.push(block.data);
      return;
    case "unknown":
      parts.push(JSON.stringify(block.original));
      return;
    default:
      return;
  }
}

export function messageParts(message: RequestMessage): string[] {
  const parts: string[] = [];
  for (const block of contentBlocks(message.content)) addParts(block, parts);
  return parts.filter((part) => part.length > 0);
}
