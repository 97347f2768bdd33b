import type { Message } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";
import { isUserAuthored } from "../conversation/conversation.ts";
import { GROWTH_WINDOW_CALLS, RECOMPACTION_CHAIN_TURNS } from "../defaults.ts";

/** Growths needed before the rate is known: one call's growth says too little. */
const GROWTHS_NEEDED = 2;

/** What `status()` reports about the session's compactions and growth. */
export interface SessionStats {
  /** Called when a message the user wrote arrives (a new turn). */
  newTurn(): void;
  /** Called at the start of a call that added messages, with how much the context grew since the previous call. */
  grew(tokens: number): void;
  /** Called after each summary (boundary compaction); returns the recompaction chain. */
  compacted(): number;
  /** Summaries so far: the summary layer, session notes, reactive and manual ones. */
  readonly compactions: number;
  /** Summaries in a row that came within three turns of the previous one. */
  readonly chain: number;
  /** Average growth per call over the last calls, once two are known. */
  readonly growthRate: number | undefined;
  /** Why the rate gives no "compaction in about N turns" (unknown, or not growing), in words; else undefined. */
  readonly growthUnknown: string | undefined;
}

/** A transcript being resumed, and the layers whose layer decisions are partial compactions (summary layers). */
export interface ResumedTranscript {
  entries: readonly TranscriptEntry[];
  summaryLayers: ReadonlySet<string>;
}

interface StatsState {
  compactions: number;
  chain: number;
  turnsSince: number;
  readonly growth: number[];
  /** What the resumed transcript gave: its responses with a usage, and the growths measured from them. */
  resumed: { responses: number; measured: number } | undefined;
}

/**
 * The session's counts. A resumed session's go on from its transcript: its compactions (boundaries, and the
 * partial compactions its summary layers recorded) and the growth between its last measured responses are read
 * once, as the entries are walked, so nothing but the counts is kept (decision 0043).
 */
export function createSessionStats(resumed?: ResumedTranscript): SessionStats {
  const state: StatsState = {
    compactions: 0,
    chain: 0,
    turnsSince: Number.POSITIVE_INFINITY,
    growth: [],
    resumed: undefined,
  };
  if (resumed) replayTranscript(state, resumed);
  return {
    newTurn() {
      state.turnsSince++;
    },
    grew: (tokens) => grew(state, tokens),
    compacted: () => compacted(state),
    get compactions() {
      return state.compactions;
    },
    get chain() {
      return state.chain;
    },
    get growthRate() {
      return growthRate(state);
    },
    get growthUnknown() {
      return growthUnknown(state);
    },
  };
}

function grew(state: StatsState, tokens: number): void {
  state.growth.push(tokens);
  if (state.growth.length > GROWTH_WINDOW_CALLS) state.growth.shift();
}

function compacted(state: StatsState): number {
  state.compactions++;
  state.chain = state.turnsSince <= RECOMPACTION_CHAIN_TURNS ? state.chain + 1 : 1;
  state.turnsSince = 0;
  return state.chain;
}

function growthRate(state: StatsState): number | undefined {
  const { growth } = state;
  return growth.length >= GROWTHS_NEEDED
    ? growth.reduce((sum, value) => sum + value, 0) / growth.length
    : undefined;
}

function growthUnknown(state: StatsState): string | undefined {
  const rate = growthRate(state);
  if (rate !== undefined)
    return rate > 0 ? undefined : `the context has not grown over the last ${state.growth.length} calls`;
  const known = state.growth.length;
  const needed = `it needs the growth of ${GROWTHS_NEEDED} calls and ${known} ${known === 1 ? "is" : "are"} known`;
  const resumed = state.resumed;
  if (resumed === undefined) return needed;
  if (resumed.responses === 0)
    return `${needed}: the resumed transcript's responses carry no usage to measure its growth by`;
  return `${needed}: the resumed transcript measured ${resumed.measured} (two responses measure one growth when no compaction or edit came between them)`;
}

/**
 * Replays the transcript's events into the counts: each compaction, each message the user wrote (a turn, for the
 * recompaction chain), and the growth between consecutive responses' usages (the window occupancy each response
 * reported). A compaction or a layer's edit between two responses makes their difference no growth, so that pair
 * is skipped; the messages of one response (parallel tool calls split by `responseId`) are one measurement.
 */
function replayTranscript(state: StatsState, resumed: ResumedTranscript): void {
  let previous: { tokens: number; responseId: string | undefined } | undefined;
  let responses = 0;
  let measured = 0;
  for (const entry of resumed.entries) {
    if (entry.type === "compact_boundary" || entry.type === "layer_decision") {
      if (entry.type === "compact_boundary" || resumed.summaryLayers.has(entry.layer)) compacted(state);
      previous = undefined;
      continue;
    }
    if (entry.type !== "message") continue;
    const message = entry.message;
    if (isUserAuthored(message)) state.turnsSince++;
    const tokens = responseTokens(message);
    if (tokens === undefined) continue;
    responses++;
    if (
      previous !== undefined &&
      message.responseId !== undefined &&
      message.responseId === previous.responseId
    )
      continue;
    if (previous !== undefined) {
      grew(state, tokens - previous.tokens);
      measured++;
    }
    previous = { tokens, responseId: message.responseId };
  }
  state.resumed = { responses, measured };
}

/** The window occupancy a response reported (input, cache and output tokens), when it carries a valid usage. */
function responseTokens(message: Message): number | undefined {
  if (message.role !== "assistant" || message.usage === undefined) return undefined;
  const { inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens } = message.usage;
  const fields = [inputTokens, outputTokens, cacheCreationInputTokens ?? 0, cacheReadInputTokens ?? 0];
  if (!fields.every((value) => typeof value === "number" && Number.isFinite(value) && value >= 0))
    return undefined;
  return fields.reduce((sum, value) => sum + value, 0);
}
