/** When the session notes are updated. */
export interface SessionMemoryThresholds {
  /** No notes before the context reaches this many tokens (too little to be worth it). Default 10,000. */
  initTokens?: number;
  /** Context growth since the last update, required for every update. Default 5,000. */
  minTokensBetweenUpdates?: number;
  /** Tool calls since the last update that, with the growth, trigger an update. Default 3. */
  toolCallsBetweenUpdates?: number;
}

export const DEFAULT_SESSION_MEMORY_THRESHOLDS: Required<SessionMemoryThresholds> = {
  initTokens: 10_000,
  minTokensBetweenUpdates: 5_000,
  toolCallsBetweenUpdates: 3,
};

/** What the trigger remembers between turns (persisted, so it survives resume). */
export interface SessionMemoryTriggerState {
  initialized: boolean;
  /** Context tokens when the last update started. */
  tokensAtLastUpdate: number;
  toolCallsSinceLastUpdate: number;
}

export const INITIAL_TRIGGER_STATE: SessionMemoryTriggerState = {
  initialized: false,
  tokensAtLastUpdate: 0,
  toolCallsSinceLastUpdate: 0,
};

/** One model response, as the post-sampling hook reports it. */
export interface SessionTurnObservation {
  /** Context size in tokens after the response. */
  contextTokens: number;
  /** Tool calls the response made (0: a turn without tool calls, a natural break). */
  toolCalls: number;
}

export interface TriggerDecision {
  update: boolean;
  /** The state after this turn (already reset when `update` is true). */
  state: SessionMemoryTriggerState;
  /** Why, in a few words. */
  reason: string;
}

/**
 * Decides after each response whether to update the notes: never below `initTokens`; then only when the
 * context grew by `minTokensBetweenUpdates` since the last update (a hard requirement, so updates stay
 * cheap) AND either `toolCallsBetweenUpdates` tool calls happened or this response made none (a natural
 * break, so the update does not land in the middle of a tool chain). Pure: the caller keeps the state.
 * After a compaction the context shrinks; growth is then counted from the new, smaller size.
 */
export function decideSessionMemoryUpdate(
  previous: SessionMemoryTriggerState,
  turn: SessionTurnObservation,
  thresholds: SessionMemoryThresholds = {},
): TriggerDecision {
  const limits = { ...DEFAULT_SESSION_MEMORY_THRESHOLDS, ...thresholds };
  const state: SessionMemoryTriggerState = {
    ...previous,
    toolCallsSinceLastUpdate: previous.toolCallsSinceLastUpdate + Math.max(0, turn.toolCalls),
  };
  if (!state.initialized) {
    if (turn.contextTokens < limits.initTokens) {
      return { update: false, state, reason: `below the ${limits.initTokens}-token start` };
    }
    state.initialized = true;
  }
  if (turn.contextTokens < state.tokensAtLastUpdate) state.tokensAtLastUpdate = turn.contextTokens;
  const growth = turn.contextTokens - state.tokensAtLastUpdate;
  if (growth < limits.minTokensBetweenUpdates) {
    return { update: false, state, reason: `grew ${growth} of ${limits.minTokensBetweenUpdates} tokens` };
  }
  const enoughTools = state.toolCallsSinceLastUpdate >= limits.toolCallsBetweenUpdates;
  const naturalBreak = turn.toolCalls === 0;
  if (!enoughTools && !naturalBreak) {
    return {
      update: false,
      state,
      reason: `${state.toolCallsSinceLastUpdate} of ${limits.toolCallsBetweenUpdates} tool calls, mid tool chain`,
    };
  }
  return {
    update: true,
    state: { initialized: true, tokensAtLastUpdate: turn.contextTokens, toolCallsSinceLastUpdate: 0 },
    reason: naturalBreak ? "grew enough, natural break" : "grew enough, enough tool calls",
  };
}
