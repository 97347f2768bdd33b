import { GROWTH_WINDOW_CALLS, RECOMPACTION_CHAIN_TURNS } from "../defaults.ts";

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
}

export function createSessionStats(): SessionStats {
  let compactions = 0;
  let chain = 0;
  let turnsSince = Number.POSITIVE_INFINITY;
  const growth: number[] = [];
  return {
    newTurn() {
      turnsSince++;
    },
    grew(tokens) {
      growth.push(tokens);
      if (growth.length > GROWTH_WINDOW_CALLS) growth.shift();
    },
    compacted() {
      compactions++;
      chain = turnsSince <= RECOMPACTION_CHAIN_TURNS ? chain + 1 : 1;
      turnsSince = 0;
      return chain;
    },
    get compactions() {
      return compactions;
    },
    get chain() {
      return chain;
    },
    get growthRate() {
      return growth.length >= 2 ? growth.reduce((sum, value) => sum + value, 0) / growth.length : undefined;
    },
  };
}
