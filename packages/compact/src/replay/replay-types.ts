import type { CacheablePrompt, RequestMessage } from "@unforget/core";
import type { CachedInput } from "../cache/prompt-cache.ts";
import type { LayerReport } from "../manager/context-events.ts";

/** One model call of the replay. */
export interface ReplayCall {
  /** 1-based call number. */
  index: number;
  /** Recorded time of the call. */
  time: number;
  /** The request's messages as the manager prepared them. */
  messages: RequestMessage[];
  /** The request as it would be sent: system, tools and messages with their cache breakpoints. */
  request: CacheablePrompt;
  /** How the provider would bill the request's input: read from the cache, written to it, neither. */
  billing: CachedInput;
  /** Dollars: this request's input, and the summaries written while preparing it (their input and output). */
  inputCostUsd: number;
  summarizerCostUsd: number;
  /** Dollars of the reference's request at this call (every message, the oldest dropped to fit the window). */
  slidingWindowCostUsd: number;
  /**
   * Outputs this call reads or runs again (the same path, the same command) that its request no longer held
   * as they were: cleared, then needed. A live model would have read them again; their tokens are charged
   * as a new result is, written to the cache once (not part of `inputCostUsd`).
   */
  clearedThenNeeded: { results: number; tokens: number; costUsd: number };
  /** Input tokens of the request (system and tools included). */
  tokens: number;
  /** Tokens at the start of the request unchanged from the previous one (a prompt-cache hit). */
  prefixTokens: number;
  /** Tokens the conversation would have had with no management at all (the naive line). */
  naiveTokens: number;
  /** What the ladder did before this call. */
  actions: LayerReport[];
  /**
   * Invariant violations of this request (must be empty): broken tool pairs, a user message lost. Going over
   * the window is not one: it is an overflow (`tokens` above the window), counted apart.
   */
  violations: string[];
  /** The manager's threshold at this call. */
  threshold: number;
  /** The working set's ceiling and floor at this call, when the manager's policy keeps one. */
  workingSet?: { ceiling: number | undefined; floor: number | undefined };
}

export interface ReplayStats {
  /** The session's model calls (summariser calls not included). */
  calls: number;
  /** Largest request input, in tokens. */
  peakTokens: number;
  window: number;
  /** Requests whose input exceeds the window. */
  overflows: number;
  /** Every layer of the manager's ladder (also those that never ran), and any other layer that reported. */
  layers: Record<string, { runs: number; tokensFreed: number }>;
  summarizerCalls: number;
  /** Tokens the summaries read (a model's spend, or what a model would have read for the extractive summariser). */
  summarizerInputTokens: number;
  /** Tokens the summaries wrote (what a model would have written, for the extractive summariser). */
  summarizerOutputTokens: number;
  /** Share (0–1) of the request tokens, from the second call on, that repeat the previous request's prefix. */
  prefixReuse: number;
  /** The session's requests' input, as billed: read from the prompt cache, written to it, and neither. */
  cacheReadTokens: number;
  cacheWriteTokens: number;
  uncachedInputTokens: number;
  /**
   * What the input costs, in dollars: every request's cache reads, cache writes (again after each cache break
   * and each idle gap longer than the cache lives) and uncached input, and the summariser's calls (input read
   * uncached, and output).
   */
  inputCostUsd: number;
  /** The same in input tokens (dollars ÷ the input price), so that models compare. */
  inputCost: number;
  /**
   * The reference a ladder must beat, priced the same way: every message sent, the oldest dropped when the
   * window is full (what can always be sent with no compaction at all; it forgets).
   */
  slidingWindowInputCostUsd: number;
  slidingWindowInputCost: number;
  /**
   * Every call's outputs cleared, then needed (`ReplayCall.clearedThenNeeded`): how many, their tokens, and
   * what reading them again costs (written to the cache once). Not part of `inputCostUsd`: add it for the
   * price of forgetting.
   */
  clearedThenNeeded: { results: number; tokens: number; costUsd: number };
  /** Distinct error codes (exception names, `TS2345`, `E0308`, `ENOENT`, …) seen in tool output, and how many of them the last request still holds. */
  errorCodes: { seen: number; kept: number };
  /** Every call's invariant violations, prefixed with the call ("call 12: …"); overflows are not among them. */
  violations: string[];
}

export interface ReplayResult {
  stats: ReplayStats;
  calls: ReplayCall[];
}
