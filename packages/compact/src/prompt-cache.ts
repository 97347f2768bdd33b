import type { CacheablePrompt, ContentBlock, RequestMessage } from "@unforget/core";

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

/** One stretch of the prompt, in the cache's order: the tools, the system prompt, then each message. */
interface Segment {
  key: string;
  tokens: number;
  blocks: number;
  /** A `cache_control` marker ends this segment (markers are placed on a message's last cacheable block). */
  breakpoint: boolean;
}

/**
 * Anthropic's prompt cache, as the replay bills requests: entries are written at each `cache_control`
 * breakpoint; a request reads the longest live entry found at a block boundary up to 20 blocks before one of
 * its breakpoints; what follows, up to its last breakpoint, is written (1.25× the input price with the
 * 5-minute lifetime, 2× with the hour); anything after the last breakpoint is plain input. An entry lives
 * for the lifetime after it was last written or read, by the session's recorded clock. Markers themselves do
 * not count as content: moving the breakpoint does not change the prefix. Granularity is the message: a
 * marker is taken to end its message, which is where `withCacheBreakpoints` puts it.
 */
export function createPromptCache(options: PromptCacheOptions = {}): PromptCache {
  const ttl = CACHE_TTL_MS[options.ttl ?? "5m"];
  const minimum = options.minimumCacheableTokens ?? MINIMUM_CACHEABLE_TOKENS;
  const lookback = options.lookbackBlocks ?? LOOKBACK_BLOCKS;
  const entries = new Map<string, number>();
  const keyOf = createMessageKeys();
  let billed = 0;
  return {
    bill(prompt, preambleTokens, countMessage, time) {
      const segments: Segment[] = [];
      if (prompt.tools && prompt.tools.length > 0) {
        segments.push({
          key: stableKey(prompt.tools),
          tokens: preambleTokens.tools,
          blocks: prompt.tools.length,
          breakpoint: prompt.tools.some((tool) => tool.cache_control !== undefined),
        });
      }
      if (prompt.system !== undefined && prompt.system.length > 0) {
        const blocks = typeof prompt.system === "string" ? [] : prompt.system;
        segments.push({
          key: stableKey(prompt.system),
          tokens: preambleTokens.system,
          blocks: Math.max(1, blocks.length),
          breakpoint: blocks.some((block) => block.cache_control !== undefined),
        });
      }
      for (const message of prompt.messages) {
        segments.push({
          key: keyOf(message),
          tokens: countMessage(message),
          blocks: message.content.length,
          breakpoint: message.content.some((block) => "cache_control" in block && block.cache_control),
        });
      }
      // Prefix keys, sizes and block positions, segment by segment.
      const prefixKey: string[] = [];
      const prefixTokens: number[] = [];
      const prefixBlocks: number[] = [];
      let key = "";
      let tokens = 0;
      let blocks = 0;
      for (const segment of segments) {
        key = hashText(`${key}|${segment.key}`);
        tokens += segment.tokens;
        blocks += segment.blocks;
        prefixKey.push(key);
        prefixTokens.push(tokens);
        prefixBlocks.push(blocks);
      }
      const breakpoints = segments.flatMap((segment, index) =>
        segment.breakpoint && prefixTokens[index]! >= minimum ? [index] : [],
      );
      const alive = (index: number) => (entries.get(prefixKey[index]!) ?? -1) >= time;
      let hit = -1;
      for (const breakpoint of breakpoints) {
        for (let index = breakpoint; index > hit; index--) {
          if (prefixBlocks[breakpoint]! - prefixBlocks[index]! > lookback) break;
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
 * A message's identity for the cache: its role and its blocks without their `cache_control` markers. Each
 * block's key is computed once per block object, so a replay that sends the same blocks call after call
 * serialises each of them once.
 */
function createMessageKeys(): (message: RequestMessage) => string {
  const blockKeys = new WeakMap<ContentBlock, string>();
  return (message) => {
    let key: string = message.role;
    for (const block of message.content) {
      let blockKey = blockKeys.get(block);
      if (blockKey === undefined) {
        blockKey = stableKey(block);
        blockKeys.set(block, blockKey);
      }
      key = hashText(`${key}|${blockKey}`);
    }
    return key;
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
