import {
  contentBlocks,
  type RequestMessage,
  type TextBlock,
  type Tool,
  type ToolDefinition,
} from "@unforget/core";
import type { AgentSessionOptions } from "./agent-session-options.ts";

// Prompt caching: the breakpoints a request carries (the tools, the system prompt, the last message), so each call
// reads everything before them from the provider's cache.

/** Every tool's definition for the request; with caching, the last one carries the tools' cache breakpoint. */
export function toolDefinitions(tools: readonly Tool[], caching: boolean): ToolDefinition[] {
  return tools.map((tool, index) => {
    const definition: ToolDefinition = {
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    };
    if (caching && index === tools.length - 1) definition.cache_control = { type: "ephemeral" };
    return definition;
  });
}

/** The system prompt as sent; with caching, its last block carries a cache breakpoint. */
export function systemPrompt(
  system: AgentSessionOptions["system"],
  caching: boolean,
): string | TextBlock[] | undefined {
  if (system === undefined || !caching) return system;
  const blocks: TextBlock[] = typeof system === "string" ? [{ type: "text", text: system }] : [...system];
  const last = blocks.at(-1);
  if (!last || last.text === "") return system;
  blocks[blocks.length - 1] = { ...last, cache_control: { type: "ephemeral" } };
  return blocks;
}

/**
 * The moving breakpoint: the last block of the last message is marked, so the next call reads everything
 * before it from the cache. The manager's messages are never modified (it reuses them).
 */
export function withLastMessageBreakpoint(messages: RequestMessage[]): RequestMessage[] {
  const last = messages.at(-1);
  const content = last === undefined ? [] : contentBlocks(last.content);
  const block = content.at(-1);
  if (
    !last ||
    !block ||
    block.type === "thinking" ||
    block.type === "redacted_thinking" ||
    block.type === "unknown"
  ) {
    return messages;
  }
  const marked = [...messages];
  marked[marked.length - 1] = {
    ...last,
    content: [...content.slice(0, -1), { ...block, cache_control: { type: "ephemeral" } }],
  };
  return marked;
}
