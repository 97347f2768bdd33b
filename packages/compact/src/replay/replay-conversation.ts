import {
  createUsage,
  type Message,
  PromptTooLongError,
  type RequestMessage,
  type TextBlock,
  type ToolDefinition,
} from "@unforget/core";
import { estimateMessageTokens, type ModelPricing } from "@unforget/tokens";
import { extendRequestMessages } from "@unforget/transcript";
import type { PromptCacheOptions } from "../cache/prompt-cache.ts";
import { ContextOverflowError } from "../compact-error.ts";
import { estimateTextTokens, isUserAuthored } from "../conversation/conversation.ts";
import { createErrorCodeTracker, type ErrorCodeTracker } from "../conversation/error-codes.ts";
import type { LayerReport } from "../manager/context-events.ts";
import type { ContextManager, PrepareResult } from "../manager/context-manager.ts";
import { type ClearedThenNeeded, createClearedThenNeeded } from "./cleared-then-needed.ts";
import { createReplayBilling, type ReplayBilling } from "./replay-billing.ts";
import { type SummaryTotals, statsOf, tally } from "./replay-stats.ts";
import type { ReplayCall, ReplayResult, ReplayStats } from "./replay-types.ts";
import { checkNewestTurn, checkRequest } from "./request-checks.ts";
import { createSlidingWindowReference, type SlidingWindowReference } from "./sliding-window-reference.ts";

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
  /** Prices of the model that writes the summaries, when it is another; default `pricing`. */
  summaryPricing?: ModelPricing;
  /**
   * The prompt cache: every request carries breakpoints where a live loop puts them (system and tools, and a
   * moving one on the last message) and is billed by the cache's rules; `ttl` "1h" writes cost 2× input.
   * `false` sends no breakpoints (every token is uncached input). Default: the 5-minute cache.
   */
  cache?: PromptCacheOptions | false;
  /** Called after each replayed call (for progress bars, request dumps). */
  onCall?: (call: ReplayCall) => void | Promise<void>;
}

/** A replay in progress: the manager under test, its counters and prices, and the conversation so far. */
interface ReplayState {
  readonly options: ReplayOptions;
  /** The recorded time of the call being replayed (the manager's clock). */
  time: number;
  readonly manager: ContextManager;
  /** Counts one request message, and a whole request (without system and tools). */
  readonly countOne: (message: RequestMessage) => number;
  readonly countRequest: (request: readonly RequestMessage[]) => number;
  /** Tokens of the system prompt and the tools. */
  readonly preamble: number;
  readonly bill: ReplayBilling;
  readonly reference: SlidingWindowReference;
  readonly errorCodes: ErrorCodeTracker;
  readonly needed: ClearedThenNeeded;
  /** The conversation as the manager received it (responses with the usage a provider would have reported). */
  readonly history: Message[];
  readonly calls: ReplayCall[];
  readonly layers: ReplayStats["layers"];
  /** The previous request, and how much of `history` it covered (for a request the manager gives up on). */
  previous: RequestMessage[];
  previousCovers: number;
  /** Tokens of the unmanaged conversation so far. */
  naive: number;
  readonly summaries: SummaryTotals;
  /** The messages the user wrote so far, each of which every request must hold or quote. */
  readonly userSeen: Message[];
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
  const state = createReplayState(messages, options);
  for (const message of messages) {
    // Its own size: the output of a recorded response, and the growth of the unmanaged conversation.
    const own = estimateMessageTokens(message);
    const recorded = Date.parse(message.timestamp);
    if (Number.isFinite(recorded) && recorded > state.time) state.time = recorded;
    const continuesResponse =
      message.role === "assistant" &&
      message.responseId !== undefined &&
      state.history.some(
        (earlier) => earlier.role === "assistant" && earlier.responseId === message.responseId,
      );
    if (message.role === "assistant" && !continuesResponse && state.history.length > 0) {
      await replayCall(state, message, own);
    } else if (message.role === "assistant" && continuesResponse) {
      continueResponse(state, message, own);
    } else {
      state.history.push(message);
    }
    state.naive += own;
    state.errorCodes.observe(message);
    state.needed.observe(message);
    if (isUserAuthored(message)) state.userSeen.push(message);
  }
  const stats = statsOf(state.calls, options.window, state.layers, state.summaries);
  return {
    calls: state.calls,
    stats: {
      ...stats,
      inputCost: state.bill.inTokens(stats.inputCostUsd),
      slidingWindowInputCost: state.bill.inTokens(stats.slidingWindowInputCostUsd),
      errorCodes: state.errorCodes.kept(state.calls.at(-1)?.messages ?? []),
    },
  };
}

/** The replay's state before its first message: the manager on the recorded clock, the counters, the prices. */
function createReplayState(messages: readonly Message[], options: ReplayOptions): ReplayState {
  const state = { time: Date.parse(messages[0]?.timestamp ?? "") || 0 };
  const manager = options.createManager(() => state.time);
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
  return Object.assign(state, {
    options,
    manager,
    countOne,
    countRequest,
    preamble,
    bill,
    reference,
    errorCodes: createErrorCodeTracker(),
    needed: createClearedThenNeeded(),
    history: [],
    calls: [],
    layers: Object.fromEntries(
      (manager.layers ?? []).map((layer) => [layer.name, { runs: 0, tokensFreed: 0 }]),
    ),
    previous: [],
    previousCovers: 0,
    naive: 0,
    summaries: { calls: 0, inputTokens: 0, outputTokens: 0 },
    userSeen: [],
  });
}

/** Outputs `assistant` reads again that `request` no longer held, priced as new results (written to the cache once). */
function neededAgain(
  state: ReplayState,
  assistant: Message,
  request: readonly RequestMessage[],
): ReplayCall["clearedThenNeeded"] {
  const { results, tokens } = state.needed.check(assistant, request);
  const costUsd = state.bill.inputUsd({
    tokens,
    cacheReadTokens: 0,
    cacheWriteTokens: tokens,
    uncachedTokens: 0,
  });
  return { results, tokens, costUsd };
}

/** One model call before the recorded response `message`: prepared, counted, checked, billed; then the response. */
async function replayCall(state: ReplayState, message: Message, own: number): Promise<void> {
  const { options, bill, preamble, history, calls, time } = state;
  const { prepared, tokens, actions } = await prepareCall(
    state.manager,
    history,
    options,
    (request) => preamble + state.countRequest(request),
    () => extendRequestMessages(state.previous, history.slice(state.previousCovers)),
  );
  // The first request has nothing cached before it, not even the system prompt and tools it opens with.
  const prefix =
    calls.length === 0
      ? 0
      : commonPrefixTokens(state.previous, prepared.messages, state.countRequest) + preamble;
  const violations = [
    ...checkRequest(prepared.messages, state.userSeen),
    ...checkNewestTurn(prepared.messages, history),
  ];
  const summary = tally(actions, state.layers, state.summaries);
  const sent = bill.withBreakpoints(prepared.messages, prepared.settledBlocks);
  const billing = bill.request(sent, time);
  const call: ReplayCall = {
    slidingWindowCostUsd: state.reference.bill(history, time),
    clearedThenNeeded: neededAgain(state, message, prepared.messages),
    index: calls.length + 1,
    time,
    messages: prepared.messages,
    request: { ...bill.preamble, messages: sent },
    billing,
    inputCostUsd: bill.inputUsd(billing),
    summarizerCostUsd: bill.summaryUsd(summary.inputTokens, summary.outputTokens),
    tokens,
    prefixTokens: Math.min(prefix, tokens),
    naiveTokens: preamble + state.naive,
    actions,
    violations,
    threshold: prepared.status.threshold,
    ...(prepared.status.workingSet ? { workingSet: prepared.status.workingSet } : {}),
  };
  calls.push(call);
  await options.onCall?.(call);
  state.previous = prepared.messages;
  state.previousCovers = history.length;
  history.push({
    ...message,
    usage: createUsage({ inputTokens: tokens, outputTokens: own }),
  });
}

/** A parallel call split from the same response: the last call's request is what the model saw. */
function continueResponse(state: ReplayState, message: Message, own: number): void {
  const last = state.calls.at(-1);
  if (last) {
    const again = neededAgain(state, message, last.messages);
    last.clearedThenNeeded = {
      results: last.clearedThenNeeded.results + again.results,
      tokens: last.clearedThenNeeded.tokens + again.tokens,
      costUsd: last.clearedThenNeeded.costUsd + again.costUsd,
    };
  }
  const usage = last ? createUsage({ inputTokens: last.tokens, outputTokens: own }) : undefined;
  state.history.push(usage ? { ...message, usage } : message);
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

function overflowError(tokens: number, window: number): PromptTooLongError {
  return new PromptTooLongError(`prompt is too long: ${tokens} tokens > ${window} maximum`, {
    actualTokens: tokens,
    limitTokens: window,
    providerId: "replay",
  });
}
