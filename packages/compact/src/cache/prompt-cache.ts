import { type CacheablePrompt, type ContentBlock, contentBlocks, type RequestMessage } from "@unforget/core";
import { DEFAULT_MESSAGE_OVERHEAD_TOKENS, estimateMessageTokens } from "@unforget/tokens";

/** Anthropic prompt caching's rules, as a replay applies them to the requests it would send. */
export interface PromptCacheOptions {
  /** How long an entry lives after it was last written or read: "5m" (default) or "1h". */
  ttl?: "5m" | "1h";
  /** A prefix shorter than this is never cached; default 1,024 tokens (Anthropic's minimum for Sonnet and Opus). */
  minimumCacheableTokens?: number;
  /** Block boundaries looked back over from each breakpoint for an earlier entry; default 20 (Anthropic's). */
  lookbackBlocks?: number;
}

/** How the provider would bill one request's input. */
export interface CachedInput {
  /** Input tokens of the request. */
  tokens: number;
  /** Read from the cache: the longest live entry that is a prefix of this request. */
  cacheReadTokens: number;
  /** Written to the cache: from the end of that entry to the request's last breakpoint. */
  cacheWriteTokens: number;
  /** Neither: after the last breakpoint, or the whole request when it is too short to cache. */
  uncachedTokens: number;
}

/** A simulated prompt cache; one per session (entries are shared only between requests of one replay). */
export interface PromptCache {
  /**
   * Called once per request, in time order: bills it against the entries alive at `time` (ms), then stores
   * an entry at each of its breakpoints and refreshes the one it read. `countMessage` counts one message.
   */
  bill(
    prompt: CacheablePrompt,
    preambleTokens: { tools: number; system: number },
    countMessage: (message: RequestMessage) => number,
    time: number,
  ): CachedInput;
}

/** Default lifetimes of a cache entry, in milliseconds. */
export const CACHE_TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
const MINIMUM_CACHEABLE_TOKENS = 1_024;
const LOOKBACK_BLOCKS = 20;

/** One block of the prompt, in the cache's order: each tool, each system block, then each message's blocks. */
interface Segment {
  key: string;
  tokens: number;
  /** The block carries a `cache_control` marker. */
  breakpoint: boolean;
}

/**
 * Anthropic's prompt cache, as the replay bills requests: entries are written at each `cache_control`
 * breakpoint; a request reads the longest live entry found at a block boundary up to 20 blocks before one of
 * its breakpoints; what follows, up to its last breakpoint, is written (1.25× the input price with the
 * 5-minute lifetime, 2× with the hour); anything after the last breakpoint is plain input. An entry lives
 * for the lifetime after it was last written or read, by the session's recorded clock. Markers themselves do
 * not count as content: moving the breakpoint does not change the prefix. Entries are kept block by block, so
 * a breakpoint inside a message (on the last block compaction settled) works as the API's does; a message's
 * count is shared among its blocks by their own estimates.
 */
export function createPromptCache(options: PromptCacheOptions = {}): PromptCache {
  const ttl = CACHE_TTL_MS[options.ttl ?? "5m"];
  const minimum = options.minimumCacheableTokens ?? MINIMUM_CACHEABLE_TOKENS;
  const lookback = options.lookbackBlocks ?? LOOKBACK_BLOCKS;
  const entries = new Map<string, number>();
  const keyOf = createBlockKeys();
  const blockTokens = createBlockTokens();
  let billed = 0;
  return {
    bill(prompt, preambleTokens, countMessage, time) {
      const segments: Segment[] = [];
      const tools = prompt.tools ?? [];
      tools.forEach((tool, index) => {
        segments.push({
          key: stableKey(tool),
          // The tools' tokens are counted together: the last tool carries them.
          tokens: index === tools.length - 1 ? preambleTokens.tools : 0,
          breakpoint: tool.cache_control !== undefined,
        });
      });
      if (typeof prompt.system === "string" && prompt.system.length > 0) {
        segments.push({ key: stableKey(prompt.system), tokens: preambleTokens.system, breakpoint: false });
      } else if (Array.isArray(prompt.system)) {
        prompt.system.forEach((block, index, system) => {
          segments.push({
            key: stableKey(block),
            tokens: index === system.length - 1 ? preambleTokens.system : 0,
            breakpoint: block.cache_control !== undefined,
          });
        });
      }
      for (const message of prompt.messages) {
        // Each block's share of the message's count: its own estimate, the last block taking the rest.
        const total = countMessage(message);
        let assigned = 0;
        const blocks = contentBlocks(message.content);
        blocks.forEach((block, index) => {
          const last = index === blocks.length - 1;
          const tokens = last
            ? Math.max(0, total - assigned)
            : Math.min(blockTokens(message.role, block), total - assigned);
          assigned += tokens;
          segments.push({
            key: `${message.role}:${keyOf(block)}`,
            tokens,
            breakpoint: hasBreakpoint(block),
          });
        });
      }
      // Prefix keys, sizes and block positions, segment by segment.
      const prefixKey: string[] = [];
      const prefixTokens: number[] = [];
      let key = "";
      let tokens = 0;
      for (const segment of segments) {
        key = hashText(`${key}|${segment.key}`);
        tokens += segment.tokens;
        prefixKey.push(key);
        prefixTokens.push(tokens);
      }
      const breakpoints = segments.flatMap((segment, index) =>
        segment.breakpoint && prefixTokens[index]! >= minimum ? [index] : [],
      );
      const alive = (index: number) => (entries.get(prefixKey[index]!) ?? -1) >= time;
      let hit = -1;
      for (const breakpoint of breakpoints) {
        for (let index = breakpoint; index > hit; index--) {
          if (breakpoint - index > lookback) break;
          if (alive(index)) {
            hit = index;
            break;
          }
        }
      }
      const last = breakpoints.at(-1) ?? -1;
      const read = hit >= 0 ? prefixTokens[hit]! : 0;
      const written = last > hit ? prefixTokens[last]! - read : 0;
      if (hit >= 0) entries.set(prefixKey[hit]!, time + ttl);
      for (const breakpoint of breakpoints) entries.set(prefixKey[breakpoint]!, time + ttl);
      // Expired entries can never be read again: drop them now and then so a long replay stays small.
      if (++billed % 256 === 0)
        for (const [entry, expiry] of entries) if (expiry < time) entries.delete(entry);
      return {
        tokens,
        cacheReadTokens: read,
        cacheWriteTokens: written,
        uncachedTokens: tokens - read - written,
      };
    },
  };
}

/**
 * True when a block carries a breakpoint: its own `cache_control`, or, for a tool result, one on the last
 * block of its content (the API takes either, and both end the cached prefix with the result).
 */
function hasBreakpoint(block: ContentBlock): boolean {
  if ("cache_control" in block && block.cache_control !== undefined) return true;
  if (block.type !== "tool_result" || typeof block.content === "string") return false;
  const last = block.content.at(-1);
  return last !== undefined && "cache_control" in last && last.cache_control !== undefined;
}

/** A block's identity for the cache: its JSON without `cache_control`, computed once per block object. */
function createBlockKeys(): (block: ContentBlock) => string {
  const keys = new WeakMap<ContentBlock, string>();
  return (block) => {
    let key = keys.get(block);
    if (key === undefined) {
      key = stableKey(block);
      keys.set(block, key);
    }
    return key;
  };
}

/** A block's own estimate (its message's overhead left out), once per block object. */
function createBlockTokens(): (role: RequestMessage["role"], block: ContentBlock) => number {
  const known = new WeakMap<ContentBlock, number>();
  return (role, block) => {
    let tokens = known.get(block);
    if (tokens === undefined) {
      tokens = Math.max(
        0,
        estimateMessageTokens({ role, content: [block] }) - DEFAULT_MESSAGE_OVERHEAD_TOKENS,
      );
      known.set(block, tokens);
    }
    return tokens;
  };
}

/** A hash of a value's JSON without `cache_control` fields, which do not change what is cached. */
function stableKey(value: unknown): string {
  return hashText(JSON.stringify(value, (name, field) => (name === "cache_control" ? undefined : field)));
}

/** cyrb53: a fast 53-bit string hash; collisions are negligible at a replay's few thousand prefixes. */
function hashText(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}
