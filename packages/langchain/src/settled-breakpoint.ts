import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import type { HostBreakpoints } from "@unforget/compact";
import type { CacheControl, ContentBlock, Message, ToolResultContentBlock } from "@unforget/core";
import { decodeLangChainMessage } from "./decode-langchain-message.ts";
import { encodeLangChainMessage } from "./encode-langchain-message.ts";
import { isRecord } from "./is-record.ts";

/** Blocks a `cache_control` marker may go on (thinking cannot carry one, nor an empty text). */
function cacheable(block: ContentBlock | ToolResultContentBlock): boolean {
  if (block.type === "text") return block.text.length > 0;
  return block.type === "image" || block.type === "document";
}

/** `cache_control` markers in a LangChain message's content blocks (nested ones in a tool message's too). */
function countMarkers(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  let count = 0;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.cache_control !== undefined) count++;
    if (Array.isArray(block.content)) count += countMarkers(block.content);
  }
  return count;
}

/**
 * How LangChain messages carry breakpoints (`cache_control` on a content block, as ChatAnthropic reads it),
 * and how one gets the settled breakpoint: its last text, image or document block, a string content becoming
 * one text block. An AI message with tool calls gets none (they carry no field for it).
 */
export function langChainBreakpoints(control: CacheControl): HostBreakpoints<BaseMessage> {
  return {
    count: (message) => (isBaseMessage(message) ? countMarkers(message.content) : 0),
    mark(message) {
      if (!isBaseMessage(message) || message.getType() === "system") return undefined;
      if (((message as { tool_calls?: unknown[] }).tool_calls?.length ?? 0) > 0) return undefined;
      const decoded = decodeLangChainMessage(message);
      const marked = markLast(decoded, control);
      if (!marked) return undefined;
      const encoded = encodeLangChainMessage(marked);
      return encoded.length === 1 ? encoded[0] : undefined;
    },
  };
}

/** The message with `control` on its last block that can carry one (inside a tool result's content too). */
function markLast(message: Message, control: CacheControl): Message | undefined {
  const blocks = message.content;
  const last = blocks.at(-1);
  if (!last) return undefined;
  if (last.type === "tool_result") {
    const inner: ToolResultContentBlock[] =
      typeof last.content === "string" ? [{ type: "text", text: last.content }] : [...last.content];
    const at = inner.findLastIndex(cacheable);
    if (at < 0) return undefined;
    inner[at] = { ...inner[at]!, cache_control: control } as ToolResultContentBlock;
    return { ...message, content: [...blocks.slice(0, -1), { ...last, content: inner }] };
  }
  const at = blocks.findLastIndex(cacheable);
  if (at < 0) return undefined;
  const content = blocks.map((block, index) =>
    index === at ? ({ ...block, cache_control: control } as ContentBlock) : block,
  );
  return { ...message, content };
}
