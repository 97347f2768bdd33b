import {
  type CacheablePrompt,
  contentBlocks,
  createUsage,
  findToolPairViolations,
  type Message,
  PromptTooLongError,
  type RequestMessage,
  type TextBlock,
  type ToolDefinition,
} from "@unforget/core";
import { estimateMessageTokens, type ModelPricing } from "@unforget/tokens";
import { extendRequestMessages } from "@unforget/transcript";
import type { CachedInput, PromptCacheOptions } from "../cache/prompt-cache.ts";
import { ContextOverflowError } from "../compact-error.ts";
import {
  estimateTextTokens,
  isTextObservation,
  isUserAuthored,
  resultText,
  userText,
} from "../conversation/conversation.ts";
import { createErrorCodeTracker } from "../conversation/error-codes.ts";
import { findNewestTurn } from "../conversation/newest-turn.ts";
import type { LayerReport } from "../manager/context-events.ts";
import type { ContextManager, PrepareResult } from "../manager/context-manager.ts";
import { createClearedThenNeeded } from "./cleared-then-needed.ts";
import { createReplayBilling } from "./replay-billing.ts";
import { createSlidingWindowReference } from "./sliding-window-reference.ts";

/**
 * A user message counts as kept when its first characters appear in the request (verbatim, or quoted in a
 * summary or placeholder, which cut long messages but never below this).
 */
export const USER_PREFIX_CHARS = 100;

export interface ReplayOptions {
  /**
   * Creates the manager under test. `clock` returns the recorded time of the call being replayed, so
   * time-based layers decide as they did live.
   */
  createManager(clock: () => number): ContextManager;
  /** The context window, for overflow counting. */
  window: number;
  system?: string | TextBlock[];
  tools?: ToolDefinition[];
  /** Counts a request's input tokens; default the calibrated estimate (unpadded). */
  countRequest?: (messages: readonly RequestMessage[]) => number;
  /** Prices of the model the requests go to (`getModelPricing(model)`); default the Sonnet tier, $3 / $15 per million tokens. */
  pricing?: ModelPricing;
  /**
   * The prompt cache: every request carries breakpoints where a live loop puts them (system and tools, and a
   * moving one on the last message) and is billed by the cache's rules; `ttl` "1h" writes cost 2× input.
   * `false` sends no breakpoints (every token is uncached input). Default: the 5-minute cache.
   */
  cache?: PromptCacheOptions | false;
  /** Called after each replayed call (for progress bars, request dumps). */
  onCall?: (call: ReplayCall) => void | Promise<void>;
}

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

/**
 * Replays a recorded conversation call by call through a context manager as if it were live: before each
 * assistant response the request is prepared (and compacted when due) with the recorded time as the clock,
 * counted and checked; then the recorded response is appended with the usage a provider would have reported
 * for that request, so usage anchoring and calibration work as in a live session. Deterministic for a
 * deterministic manager (offline summaries, counter ids).
 */
export async function replayConversation(
  messages: readonly Message[],
  options: ReplayOptions,
): Promise<ReplayResult> {
  let time = Date.parse(messages[0]?.timestamp ?? "") || 0;
  const manager = options.createManager(() => time);
  const countMessage = createMessageCounter();
  const countOne = options.countRequest
    ? (message: RequestMessage) => options.countRequest!([message])
    : countMessage;
  const countRequest =
    options.countRequest ??
    ((request: readonly RequestMessage[]) =>
      request.reduce((sum, message) => sum + countMessage(message), 0));
  const preambleParts = preambleTokens(options.system, options.tools);
  const preamble = preambleParts.system + preambleParts.tools;
  const bill = createReplayBilling(options, preambleParts, countOne);
  const reference = createSlidingWindowReference({
    window: options.window,
    preambleTokens: preamble,
    countMessage: countOne,
    bill: (request, time) => bill.inputUsd(bill.reference(request, time)),
  });
  const errorCodes = createErrorCodeTracker();
  const needed = createClearedThenNeeded();
  const neededAgain = (assistant: Message, request: readonly RequestMessage[]) => {
    const { results, tokens } = needed.check(assistant, request);
    const costUsd = bill.inputUsd({
      tokens,
      cacheReadTokens: 0,
      cacheWriteTokens: tokens,
      uncachedTokens: 0,
    });
    return { results, tokens, costUsd };
  };
  const history: Message[] = [];
  const calls: ReplayCall[] = [];
  const layers: ReplayStats["layers"] = Object.fromEntries(
    (manager.layers ?? []).map((layer) => [layer.name, { runs: 0, tokensFreed: 0 }]),
  );
  let previous: RequestMessage[] = [];
  // How much of `history` the previous request covered, for a request the manager gives up on.
  let previousCovers = 0;
  let naive = 0;
  const summaries = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const userSeen: Message[] = [];

  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    // Its own size: the output of a recorded response, and the growth of the unmanaged conversation.
    const own = estimateMessageTokens(message);
    const recorded = Date.parse(message.timestamp);
    if (Number.isFinite(recorded) && recorded > time) time = recorded;
    const continuesResponse =
      message.role === "assistant" &&
      message.responseId !== undefined &&
      history.some((earlier) => earlier.role === "assistant" && earlier.responseId === message.responseId);
    if (message.role === "assistant" && !continuesResponse && history.length > 0) {
      const { prepared, tokens, actions } = await prepareCall(
        manager,
        history,
        options,
        (request) => preamble + countRequest(request),
        () => extendRequestMessages(previous, history.slice(previousCovers)),
      );
      // The first request has nothing cached before it, not even the system prompt and tools it opens with.
      const prefix =
        calls.length === 0 ? 0 : commonPrefixTokens(previous, prepared.messages, countRequest) + preamble;
      const violations = [
        ...checkRequest(prepared.messages, userSeen),
        ...checkNewestTurn(prepared.messages, history),
      ];
      const summary = tally(actions, layers, summaries);
      const sent = bill.withBreakpoints(prepared.messages, prepared.settledBlocks);
      const billing = bill.request(sent, time);
      const call: ReplayCall = {
        slidingWindowCostUsd: reference.bill(history, time),
        clearedThenNeeded: neededAgain(message, prepared.messages),
        index: calls.length + 1,
        time,
        messages: prepared.messages,
        request: { ...bill.preamble, messages: sent },
        billing,
        inputCostUsd: bill.inputUsd(billing),
        summarizerCostUsd: bill.summaryUsd(summary.inputTokens, summary.outputTokens),
        tokens,
        prefixTokens: Math.min(prefix, tokens),
        naiveTokens: preamble + naive,
        actions,
        violations,
        threshold: prepared.status.threshold,
        ...(prepared.status.workingSet ? { workingSet: prepared.status.workingSet } : {}),
      };
      calls.push(call);
      await options.onCall?.(call);
      previous = prepared.messages;
      previousCovers = history.length;
      history.push({
        ...message,
        usage: createUsage({ inputTokens: tokens, outputTokens: own }),
      });
    } else if (message.role === "assistant" && continuesResponse) {
      // A parallel call split from the same response: the last call's request is what the model saw.
      const last = calls.at(-1);
      if (last) {
        const again = neededAgain(message, last.messages);
        last.clearedThenNeeded = {
          results: last.clearedThenNeeded.results + again.results,
          tokens: last.clearedThenNeeded.tokens + again.tokens,
          costUsd: last.clearedThenNeeded.costUsd + again.costUsd,
        };
      }
      const usage =
        calls.length > 0
          ? createUsage({
              inputTokens: calls[calls.length - 1]!.tokens,
              outputTokens: own,
            })
          : undefined;
      history.push(usage ? { ...message, usage } : message);
    } else {
      history.push(message);
    }
    naive += own;
    errorCodes.observe(message);
    needed.observe(message);
    if (isUserAuthored(message)) userSeen.push(message);
  }

  const stats = statsOf(calls, options.window, layers, summaries);
  return {
    calls,
    stats: {
      ...stats,
      inputCost: bill.inTokens(stats.inputCostUsd),
      slidingWindowInputCost: bill.inTokens(stats.slidingWindowInputCostUsd),
      errorCodes: errorCodes.kept(calls.at(-1)?.messages ?? []),
    },
  };
}

/**
 * One call as a live loop makes it: prepare the request, and after the provider refuses (over the window)
 * recover once. A recovery that fails leaves the request as it was: the call counts as an overflow. When the
 * manager gives up (nothing brings the request under the window) a live turn stops; the replay goes on with
 * `unmanaged()` (what the manager last sent plus what came since), which the overflow counts.
 */
async function prepareCall(
  manager: ContextManager,
  history: readonly Message[],
  options: ReplayOptions,
  count: (request: readonly RequestMessage[]) => number,
  unmanaged: () => RequestMessage[],
): Promise<{ prepared: PrepareResult; tokens: number; actions: LayerReport[] }> {
  const prepareOptions = {
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.tools !== undefined ? { tools: options.tools } : {}),
  };
  let prepared: PrepareResult;
  let givenUpAt = 0;
  try {
    prepared = await manager.prepare(history, prepareOptions);
  } catch (error) {
    if (!(error instanceof ContextOverflowError)) throw error;
    givenUpAt = error.tokens;
    prepared = {
      messages: unmanaged(),
      projected: [...history],
      tokensBefore: error.tokens,
      tokens: error.tokens,
      actions: [],
      status: manager.status(),
    };
  }
  // A request the manager gave up on is over the window by its own count, whatever this estimate says.
  let tokens = Math.max(count(prepared.messages), givenUpAt);
  const actions = [...prepared.actions];
  if (tokens > options.window && givenUpAt === 0) {
    try {
      prepared = await manager.recover(overflowError(tokens, options.window), prepareOptions);
      actions.push(...prepared.actions);
      tokens = count(prepared.messages);
    } catch {
      // The request stays as it was; it counts as an overflow.
    }
  }
  return { prepared, tokens, actions };
}

/**
 * Counts what each layer did and what the summariser read and wrote (an extractive summary counts as one
 * call); returns this call's summaries alone.
 */
function tally(
  actions: readonly LayerReport[],
  layers: ReplayStats["layers"],
  summaries: { calls: number; inputTokens: number; outputTokens: number },
): { inputTokens: number; outputTokens: number } {
  const call = { inputTokens: 0, outputTokens: 0 };
  for (const action of actions) {
    const layer = layers[action.layer] ?? { runs: 0, tokensFreed: 0 };
    layers[action.layer] = layer;
    layer.runs++;
    layer.tokensFreed += action.tokensFreed;
    summaries.calls += action.stats.summarizerCalls ?? 0;
    if (action.summarizer !== undefined && action.summarizer !== "session-memory") {
      call.inputTokens += action.stats.summarizerInputTokens ?? 0;
      call.outputTokens += action.stats.summarizerOutputTokens ?? 0;
      if ((action.stats.summarizerCalls ?? 0) === 0) summaries.calls += 1;
    }
  }
  summaries.inputTokens += call.inputTokens;
  summaries.outputTokens += call.outputTokens;
  return call;
}

/** The session's figures from its calls (the costs in input tokens and the error codes are added by the caller). */
function statsOf(
  calls: readonly ReplayCall[],
  window: number,
  layers: ReplayStats["layers"],
  summaries: { calls: number; inputTokens: number; outputTokens: number },
): Omit<ReplayStats, "inputCost" | "slidingWindowInputCost" | "errorCodes"> {
  const totalTokens = calls.reduce((sum, call) => sum + call.tokens, 0);
  const cached = calls.reduce((sum, call) => sum + call.prefixTokens, 0);
  // The first call has no previous request to share a prefix with: reuse is measured from the second on.
  const laterTokens = totalTokens - (calls[0]?.tokens ?? 0);
  const sum = (pick: (call: ReplayCall) => number) => calls.reduce((total, call) => total + pick(call), 0);
  return {
    calls: calls.length,
    peakTokens: calls.reduce((peak, call) => Math.max(peak, call.tokens), 0),
    window,
    overflows: calls.filter((call) => call.tokens > window).length,
    layers,
    summarizerCalls: summaries.calls,
    summarizerInputTokens: summaries.inputTokens,
    summarizerOutputTokens: summaries.outputTokens,
    prefixReuse: laterTokens <= 0 ? 1 : cached / laterTokens,
    cacheReadTokens: sum((call) => call.billing.cacheReadTokens),
    cacheWriteTokens: sum((call) => call.billing.cacheWriteTokens),
    uncachedInputTokens: sum((call) => call.billing.uncachedTokens),
    inputCostUsd: sum((call) => call.inputCostUsd + call.summarizerCostUsd),
    slidingWindowInputCostUsd: sum((call) => call.slidingWindowCostUsd),
    clearedThenNeeded: {
      results: sum((call) => call.clearedThenNeeded.results),
      tokens: sum((call) => call.clearedThenNeeded.tokens),
      costUsd: sum((call) => call.clearedThenNeeded.costUsd),
    },
    violations: calls.flatMap((call) =>
      call.violations.map((violation) => `call ${call.index}: ${violation}`),
    ),
  };
}

function preambleTokens(
  system: ReplayOptions["system"],
  tools: ReplayOptions["tools"],
): { system: number; tools: number } {
  const text = typeof system === "string" ? system : (system ?? []).map((block) => block.text).join("\n");
  return {
    system: text ? estimateTextTokens(text) : 0,
    tools: tools?.length ? estimateTextTokens(JSON.stringify(tools)) : 0,
  };
}

function commonPrefixTokens(
  previous: readonly RequestMessage[],
  current: readonly RequestMessage[],
  count: (messages: readonly RequestMessage[]) => number,
): number {
  let same = 0;
  while (same < previous.length && same < current.length && sameMessage(previous[same]!, current[same]!))
    same++;
  return same === 0 ? 0 : count(current.slice(0, same));
}

/** Equal messages; the common case (the same content array, reused from one request to the next) costs nothing. */
function sameMessage(a: RequestMessage, b: RequestMessage): boolean {
  if (a.role !== b.role) return false;
  return a.content === b.content || JSON.stringify(a.content) === JSON.stringify(b.content);
}

/**
 * Counts a request message, remembering the count of each content array: a replay sends the same messages
 * call after call, so each is estimated once rather than once per call (a long session stays linear).
 */
function createMessageCounter(): (message: RequestMessage) => number {
  const counts = new WeakMap<readonly unknown[], { role: string; tokens: number }>();
  return (message) => {
    // A string content (a caller's shorthand) is not worth remembering: it is one text block.
    if (typeof message.content === "string") return estimateMessageTokens(message);
    const known = counts.get(message.content);
    if (known && known.role === message.role) return known.tokens;
    const tokens = estimateMessageTokens(message);
    counts.set(message.content, { role: message.role, tokens });
    return tokens;
  };
}

function checkRequest(request: readonly RequestMessage[], users: readonly Message[]): string[] {
  const problems = findToolPairViolations(
    request.map((message, index) => ({
      ...message,
      content: contentBlocks(message.content),
      id: `request-${index}`,
      timestamp: "",
    })),
  ).map((violation) => violation.description);
  // A user message whose blocks are in the request is there verbatim; only the others are searched for in
  // the request's text (quoted by a summary or a placeholder), which is then serialised once.
  const blocks = new Set<unknown>();
  for (const message of request) for (const block of contentBlocks(message.content)) blocks.add(block);
  let text: string | undefined;
  for (const user of users) {
    if (user.content.length > 0 && user.content.every((block) => blocks.has(block))) continue;
    text ??= JSON.stringify(request);
    const prefix = JSON.stringify(userText(user).slice(0, USER_PREFIX_CHARS)).slice(1, -1);
    if (!text.includes(prefix))
      problems.push(`the user's message ${user.id} is neither in the context nor in its summary`);
  }
  return problems;
}

/**
 * The newest turn is in the request: a tool_result for each of the newest tool results (its start kept, even
 * when the budget cut or saved it), the newest observation's start, and the start and end of the newest
 * message the user wrote (verbatim, quoted whole, or cut in the middle by the budget).
 */
function checkNewestTurn(request: readonly RequestMessage[], history: readonly Message[]): string[] {
  const turn = findNewestTurn(history);
  const problems: string[] = [];
  let text: string | undefined;
  const contains = (fragment: string) => {
    text ??= JSON.stringify(request);
    return text.includes(JSON.stringify(fragment).slice(1, -1));
  };
  const results = new Map<string, string>();
  for (const message of request) {
    for (const block of contentBlocks(message.content)) {
      if (block.type === "tool_result") results.set(block.tool_use_id, resultText(block));
    }
  }
  for (const message of history) {
    if (!turn.outputMessageIds.has(message.id) || message.role !== "user") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const kept = results.get(block.tool_use_id);
      const head = resultText(block).slice(0, USER_PREFIX_CHARS);
      if (kept === undefined || !kept.includes(head.trimEnd())) {
        problems.push(`the newest tool result ${block.tool_use_id} is not in the request`);
      }
    }
    if (isTextObservation(message) && !contains(userText(message).slice(0, USER_PREFIX_CHARS))) {
      problems.push(`the newest observation ${message.id} is not in the request`);
    }
  }
  const user = turn.userText;
  if (
    user !== undefined &&
    !(contains(user.slice(0, USER_PREFIX_CHARS)) && contains(user.slice(-USER_PREFIX_CHARS)))
  ) {
    problems.push(`the user's newest message ${turn.userMessageId} is not in the request in full`);
  }
  return problems;
}

function overflowError(tokens: number, window: number): PromptTooLongError {
  return new PromptTooLongError(`prompt is too long: ${tokens} tokens > ${window} maximum`, {
    actualTokens: tokens,
    limitTokens: window,
    providerId: "replay",
  });
}
