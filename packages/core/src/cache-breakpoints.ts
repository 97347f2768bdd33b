import type { CacheControl, ContentBlock, RequestMessage, TextBlock } from "./message.ts";
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
}

/** Blocks a `cache_control` marker may go on (thinking blocks cannot carry one). */
const CACHEABLE = new Set<ContentBlock["type"]>(["text", "image", "document", "tool_use", "tool_result"]);

/**
 * The prompt with cache breakpoints where a live agent loop puts them: on the last tool and the last system
 * block (the part every call shares), and on the last cacheable block of the last message — the moving
 * breakpoint, so that the next call reads everything up to here from the cache. Three of the four markers
 * a request may carry. A string system prompt becomes one text block. Returns new objects; the prompt given
 * is not changed.
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
  const last = prompt.messages.length - 1;
  const message = prompt.messages[last];
  const at = message ? message.content.findLastIndex((block) => CACHEABLE.has(block.type)) : -1;
  if (message && at >= 0) {
    const content = message.content.map((block, index) =>
      index === at ? ({ ...block, cache_control: control } as ContentBlock) : block,
    );
    result.messages = [...prompt.messages.slice(0, last), { ...message, content }];
  }
  return result;
}
