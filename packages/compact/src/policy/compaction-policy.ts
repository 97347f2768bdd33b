import type { Message } from "@unforget/core";
import { CHEAP_LEVEL, CHEAP_MINIMUM_SHARE, CHEAP_TARGET, EARLY_MARK } from "../defaults.ts";
import type { LadderState, Layer } from "../layers/layer.ts";

/** What the policy is told at the start of an automatic call (before a model call). */
export interface PolicyInput {
  /** Context size now, in tokens (usage-anchored). */
  tokens: number;
  threshold: number;
  blockingLimit: number;
  contextWindow: number;
  /** Messages added since the previous call. */
  added: number;
  /** Milliseconds since the last assistant response, by the session clock. */
  idleMs: number;
  /** The projected messages (what would be sent now). */
  messages: readonly Message[];
}

/** What the policy is told after an automatic call's layers ran, when no summary applied. */
export interface BackgroundInput extends LadderState {
  /** True while a background summary is running or waiting to be spliced in. */
  backgroundPending: boolean;
  /** Estimated size the cheap layers would leave if they ran now as one batch (a dry run, nothing recorded). */
  cheapPassEstimate(): Promise<number>;
}

/** What one automatic call may do. */
export interface CallPlan {
  /** The cheap layers act now, all together, so the prompt cache breaks once. */
  batch: boolean;
  /** Size, in tokens, they fold toward. */
  target: number;
  /** Each cheap layer acts only if it frees at least this many tokens (each act breaks the cache). */
  minimumFreedTokens: number;
}

/** Where a working-set policy keeps the context, in tokens, for reports; both undefined before the first fall. */
export interface WorkingSetLevels {
  /** The size the context had climbed to when it last fell (the ceiling ski rental or the hard ceiling set). */
  ceiling: number | undefined;
  /** The size it fell to then (an estimate: what the fold would leave). */
  floor: number | undefined;
}

/**
 * Decides what is due: the scheduling part of the manager, replaceable. `plan` is asked once per automatic
 * call (`prepare`); `due` before each layer, in ladder order, in every call (`recover` and `compact` too);
 * `startBackground` after an automatic call's layers, when no summary applied.
 */
export interface CompactionPolicy {
  /** Shown in reports and benchmarks. */
  readonly name: string;
  /** Called at the start of each `prepare`, after the new messages are counted; never for `recover` or `compact`. */
  plan(input: PolicyInput): CallPlan | Promise<CallPlan>;
  /** Called before each layer with the state as it is now: why the layer should run, or false. Default rule: the layer's own `due`. */
  due(layer: Layer, state: LadderState): string | false;
  /** Called after a `prepare`'s layers when no summary applied: true starts a summary in the background now. */
  startBackground?(input: BackgroundInput): boolean | Promise<boolean>;
  /** Called for the status after each `plan`: the working set's ceiling and floor, when the policy keeps one. */
  levels?(): WorkingSetLevels | undefined;
}

export interface FixedLevelPolicyOptions {
  /** Share of the threshold at which the cheap layers act together; default 0.95. */
  level?: number;
  /** Share of the threshold they fold down to; default 0.3. */
  target?: number;
  /** Share of the threshold each must free to act; default 0.2. */
  minimumFreedShare?: number;
  /** Share of the threshold at which a background summary may start; default 0.85; false: never in the background. */
  earlyMark?: number | false;
}

/**
 * The default policy: fixed levels, tuned on the replay benchmark. The cheap layers act together at 95 % of
 * the threshold, down to 30 %, each only when it frees 20 % (each act breaks the prompt cache, so each must
 * buy many calls of growth). Each layer is then due by its own rule. From 85 % of the threshold, a summary
 * starts in the background once the cheap layers can no longer put it off: a dry run of their batch would
 * free less than the batch's minimum. What it summarises is then what they will not touch again.
 */
export function createFixedLevelPolicy(options: FixedLevelPolicyOptions = {}): CompactionPolicy {
  const level = options.level ?? CHEAP_LEVEL;
  const target = options.target ?? CHEAP_TARGET;
  const minimumShare = options.minimumFreedShare ?? CHEAP_MINIMUM_SHARE;
  const earlyMark = options.earlyMark === false ? undefined : (options.earlyMark ?? EARLY_MARK);
  // A dry run's answer holds while the context grows by less than the band between the early mark and the level.
  let lastDryRun: { tokens: number; after: number } | undefined;
  return {
    name: "fixed levels",
    plan(input) {
      return {
        batch: input.tokens >= input.threshold * level,
        target: Math.floor(input.threshold * target),
        minimumFreedTokens: Math.floor(input.threshold * minimumShare),
      };
    },
    async startBackground(input) {
      if (earlyMark === undefined || input.backgroundPending) return false;
      if (input.tokens < input.threshold * earlyMark || input.tokens >= input.threshold) return false;
      // Too early while the cheap layers can still put the threshold off: a summary started now would be
      // outgrown, or spliced in before it is needed. A dry run's answer holds while the context grows by less
      // than the band between the early mark and the cheap level.
      const stale =
        !lastDryRun ||
        input.tokens < lastDryRun.tokens ||
        input.tokens - lastDryRun.tokens > input.threshold * Math.max(0.01, level - earlyMark);
      if (stale) lastDryRun = { tokens: input.tokens, after: await input.cheapPassEstimate() };
      return input.tokens - lastDryRun!.after < input.minimumFreedTokens;
    },
    due(layer, state) {
      return layer.due(state);
    },
  };
}
