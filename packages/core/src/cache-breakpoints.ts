import {
  type CacheControl,
  type ContentBlock,
  contentBlocks,
  type RequestMessage,
  type TextBlock,
} from "./message.ts";
import type { ToolDefinition } from "./provider.ts";

/** The parts of a request that prompt-cache breakpoints go on. */
export interface CacheablePrompt {
  system?: string | TextBlock[];
  tools?: ToolDefinition[];
  messages: RequestMessage[];
}

export interface CacheBreakpointOptions {
  /** Cache lifetime: "5m" (default; writes cost 1.25× input) or "1h" (writes cost 2×). */
  ttl?: "5m" | "1h";
  /**
   * Blocks at the start of the messages that will not change before the next summary (compaction's
   * `PrepareResult.settledBlocks`): a fourth breakpoint goes on the last of them, so that a later change after
   * it leaves them cached. Ignored when 0 or when that block is in the last message.
   */
  settledBlocks?: number;
}

/** Blocks a `cache_control` marker may go on (thinking blocks cannot carry one). */
const CACHEABLE = new Set<ContentBlock["type"]>(["text", "image", "document", "tool_use", "tool_result"]);

/**
 * The prompt with cache breakpoints where a live agent loop puts them: on the last tool and the last system
 * block (the part every call shares), and on the last cacheable block of the last message — the moving
 * breakpoint, so that the next call reads everything up to here from the cache; with `settledBlocks`, also
 * on the last block compaction has settled. At most the four markers a request may carry. A string system
 * prompt, or a string message content that gets a marker, becomes one text block. Returns new objects; the prompt given is not changed.
 */
export function withCacheBreakpoints<T extends CacheablePrompt>(
  prompt: T,
  options: CacheBreakpointOptions = {},
): T {
  const control: CacheControl =
    options.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const result: T = { ...prompt };
  if (prompt.tools && prompt.tools.length > 0) {
    result.tools = prompt.tools.map((tool, index) =>
      index === prompt.tools!.length - 1 ? { ...tool, cache_control: control } : tool,
    );
  }
  const system: TextBlock[] | undefined =
    typeof prompt.system === "string"
      ? prompt.system.length > 0
        ? [{ type: "text", text: prompt.system }]
        : undefined
      : prompt.system;
  if (system && system.length > 0) {
    result.system = system.map((block, index) =>
      index === system.length - 1 ? { ...block, cache_control: control } : block,
    );
  }
  const messages = [...prompt.messages];
  const mark = (index: number, at: number) => {
    const message = messages[index]!;
    const content = contentBlocks(message.content).map((block, position) =>
      position === at ? ({ ...block, cache_control: control } as ContentBlock) : block,
    );
    messages[index] = { ...message, content };
  };
  const last = messages.length - 1;
  const settled = settledBlock(messages, options.settledBlocks ?? 0);
  if (settled && settled.message < last) mark(settled.message, settled.block);
  const at =
    last >= 0
      ? contentBlocks(messages[last]!.content).findLastIndex((block) => CACHEABLE.has(block.type))
      : -1;
  if (at >= 0) mark(last, at);
  if (last >= 0) result.messages = messages;
  return result;
}

/** Where the `count`-th block of the messages is, when it can carry a marker. */
function settledBlock(
  messages: readonly RequestMessage[],
  count: number,
): { message: number; block: number } | undefined {
  let remaining = count;
  for (let index = 0; index < messages.length && remaining > 0; index++) {
    const blocks = contentBlocks(messages[index]!.content);
    if (remaining <= blocks.length) {
      const block = blocks[remaining - 1]!;
      return CACHEABLE.has(block.type) ? { message: index, block: remaining - 1 } : undefined;
    }
    remaining -= blocks.length;
  }
  return undefined;
}
