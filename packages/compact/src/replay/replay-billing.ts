import {
  type CacheablePrompt,
  type RequestMessage,
  type TextBlock,
  type ToolDefinition,
  withCacheBreakpoints,
} from "@unforget/core";
import { type ModelPricing, resolvePricing, UNKNOWN_MODEL_PRICING } from "@unforget/tokens";
import { type CachedInput, createPromptCache, type PromptCacheOptions } from "../cache/prompt-cache.ts";

/** What a replay's prices depend on: the request's shared part, the prices, the cache. */
export interface ReplayBillingOptions {
  /** The system prompt every request sends (marked with a breakpoint when caching is on). */
  system?: string | TextBlock[];
  /** The tools every request sends (the last one marked when caching is on). */
  tools?: ToolDefinition[];
  /** The model's prices; default the Sonnet tier. */
  pricing?: ModelPricing;
  /** The prices of the model that writes the summaries, when it is another (a cheaper one); default `pricing`. */
  summaryPricing?: ModelPricing;
  /** The cache's rules, or false for no breakpoints (everything uncached). */
  cache?: PromptCacheOptions | false;
}

/** How a replay prices what it would send. */
export interface ReplayBilling {
  /** The system prompt and tools as sent: with their breakpoints when caching is on. */
  readonly preamble: { system?: string | TextBlock[]; tools?: ToolDefinition[] };
  /** A request's messages as sent: when caching is on, the moving breakpoint on the last one and one on the last settled block. */
  withBreakpoints(messages: RequestMessage[], settledBlocks?: number): RequestMessage[];
  /** Bills one request of the session against the session's prompt cache. */
  request(messages: RequestMessage[], time: number): CachedInput;
  /** Bills one request of the sliding-window reference against the reference's own cache. */
  reference(messages: RequestMessage[], time: number): CachedInput;
  /** Dollars of a billed input. */
  inputUsd(input: CachedInput): number;
  /** Dollars of a summary at the summariser model's prices: its input read uncached (no breakpoint), its output. */
  summaryUsd(input: number, output: number): number;
  /** Dollars as input tokens at the input price (the Sonnet tier's when the model's input is free). */
  inTokens(usd: number): number;
}

export function createReplayBilling(
  options: ReplayBillingOptions,
  preamble: { system: number; tools: number },
  countMessage: (message: RequestMessage) => number,
): ReplayBilling {
  const rates = resolvePricing(options.pricing ?? UNKNOWN_MODEL_PRICING);
  const summaryRates = options.summaryPricing ? resolvePricing(options.summaryPricing) : rates;
  const caching = options.cache !== false;
  const cacheOptions = options.cache === false ? {} : (options.cache ?? {});
  const ttl = cacheOptions.ttl === "1h" ? { ttl: "1h" as const } : {};
  const shared: CacheablePrompt = {
    messages: [],
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.tools !== undefined ? { tools: options.tools } : {}),
  };
  const { messages: _none, ...sent } = caching ? withCacheBreakpoints(shared, ttl) : shared;
  const withBreakpoints = (messages: RequestMessage[], settledBlocks = 0) =>
    caching ? withCacheBreakpoints({ messages }, { ...ttl, settledBlocks }).messages : messages;
  const sessionCache = createPromptCache(cacheOptions);
  const referenceCache = createPromptCache(cacheOptions);
  const writeRate = cacheOptions.ttl === "1h" ? rates.cacheWrite1h : rates.cacheWrite5m;
  const inputRate = rates.input > 0 ? rates.input : UNKNOWN_MODEL_PRICING.input;
  return {
    preamble: sent,
    withBreakpoints,
    request: (messages, time) => sessionCache.bill({ ...sent, messages }, preamble, countMessage, time),
    reference: (messages, time) =>
      referenceCache.bill({ ...sent, messages: withBreakpoints(messages) }, preamble, countMessage, time),
    inputUsd: (input) =>
      (input.uncachedTokens * rates.input +
        input.cacheWriteTokens * writeRate +
        input.cacheReadTokens * rates.cacheRead) /
      1_000_000,
    summaryUsd: (input, output) => (input * summaryRates.input + output * summaryRates.output) / 1_000_000,
    inTokens: (usd) => Math.round((usd * 1_000_000) / inputRate),
  };
}
