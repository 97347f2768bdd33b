import type { MemoryEntry } from "../store/memory-catalog.ts";

/** Days after which an unpinned memory ranks at half its weight. */
export const DECAY_HALF_LIFE_DAYS = 30;
/** The lowest decay factor: an old memory ranks lower, but is never hidden by age alone. */
export const DECAY_FLOOR = 0.3;

const DAY_MS = 86_400_000;

export interface DecayOptions {
  /** The time ranking is computed for. Default now. */
  now?: Date;
  /** Default 30. */
  halfLifeDays?: number;
  /** Default 0.3. */
  floor?: number;
}

/** Why a memory ranks where it does: the numbers behind its decay factor, and the factor itself. */
export interface DecayExplanation {
  /** Multiplier in [floor, 1] applied to the memory's search score. */
  factor: number;
  /** Days since the memory was last updated (or created, or its file changed). */
  ageDays: number;
  /** `decay: false` in its frontmatter: a stable fact, never demoted. */
  pinned: boolean;
  /** The relevance dream keeps for it, in [0, 1]. */
  relevance: number;
  /** One sentence for a user asking why a memory was demoted. */
  reason: string;
}

/**
 * Age decay as a ranking feature: `relevance × max(floor, 0.5^(age / halfLife))`, with pinned facts at
 * `relevance × 1`. A bounded multiplier, never a filter: a memory is never hidden because it is old.
 */
export function explainDecay(entry: MemoryEntry, options: DecayOptions = {}): DecayExplanation {
  const now = (options.now ?? new Date()).getTime();
  const halfLife = options.halfLifeDays ?? DECAY_HALF_LIFE_DAYS;
  const floor = options.floor ?? DECAY_FLOOR;
  const stamp = Date.parse(entry.updated ?? entry.created ?? "");
  const changed = Number.isNaN(stamp) ? entry.changedAtMs : stamp;
  const ageDays = Math.max(0, (now - changed) / DAY_MS);
  const relevance = Number.isFinite(entry.relevance) ? Math.min(1, Math.max(0, entry.relevance)) : 1;
  if (!entry.decay) {
    return {
      factor: relevance,
      ageDays,
      pinned: true,
      relevance,
      reason: "pinned stable fact (decay: false): age does not lower it",
    };
  }
  const age = Math.max(floor, 0.5 ** (ageDays / halfLife));
  const factor = relevance * age;
  const days = Math.round(ageDays);
  const reason =
    age === floor
      ? `${days} days old: at the floor of ×${floor} (${halfLife}-day half-life), relevance ${relevance}`
      : `${days} days old: ×${age.toFixed(2)} (${halfLife}-day half-life), relevance ${relevance}`;
  return { factor, ageDays, pinned: false, relevance, reason };
}
