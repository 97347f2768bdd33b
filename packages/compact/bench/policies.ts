import { type ContextManagerConfig, createContextManager } from "../src/index.ts";
import {
  createBaseAgentBaseline,
  createPlainRuleBaseline,
  createSimplePolicyBaseline,
  createTeachingBaseline,
} from "./baselines.ts";
import { createPruneMessagesPeer, createTrimMessagesPeer } from "./peers.ts";
import { maxOutput, type Policy, PRICING } from "./replay-corpus.ts";

/** Names the tables compare against. */
export const BASE_AGENT = "baseline: BaseAgent (prune, then summary at 85 %)";
export const TEACHING = "baseline: teaching policy (learn-claude-code)";
export const SIMPLE = "baseline: simple policy (ceiling, ski rental, floor)";
/** The variants that clear earlier than the default; the tables print their cost per session against it. */
export const SOONER = "unforget, clears sooner";

/** Our ladder with a configuration (made afresh for each manager: a policy serves one), at the window's limits, with counter ids. */
export function ours(
  name: string,
  config: () => ContextManagerConfig = () => ({}),
  cacheTtl: "5m" | "1h" = "5m",
): Policy {
  let ids = 0;
  return {
    name,
    create: (window, clock) =>
      createContextManager({
        model: "replay",
        limits: { contextWindow: window, maxOutputTokens: maxOutput(window) },
        clock,
        idFactory: (kind) => `${kind}-${++ids}`,
        pricing: PRICING,
        config: { cacheTtl, ...config() },
      }),
  };
}

/**
 * Every policy of the replay tables: ours first, then the peers as their real packages, then the
 * re-implemented baselines. `cacheTtl` is the cache the requests ask for (our policies are told it).
 */
export function policies(cacheTtl: "5m" | "1h" = "5m"): Policy[] {
  return [
    ours(
      "unforget (default: working set, ski rental, clear_at_least, 6,000-character cap)",
      undefined,
      cacheTtl,
    ),
    ours(
      "unforget, previous default (working set without the cap and clear_at_least)",
      () => ({
        toolResultBudget: { capChars: Number.POSITIVE_INFINITY },
        cheapLayers: { clearAtLeastShare: 0 },
      }),
      cacheTtl,
    ),
    // Clearing sooner, now that a cleared result can be read back by id: does it lower the bill?
    ours(
      `${SOONER}: cheap layers from 0.75 of the threshold`,
      () => ({ cheapLayers: { level: 0.75 } }),
      cacheTtl,
    ),
    ours(
      `${SOONER}: folds of half the size (clear_at_least 0.035)`,
      () => ({ cheapLayers: { clearAtLeastShare: 0.035 } }),
      cacheTtl,
    ),
    {
      name: "peer: LangChain trimMessages",
      // What fits beside the output reserve; the system prompt and tools are small next to it.
      create: (window) => createTrimMessagesPeer(window - maxOutput(window) - 2_000),
    },
    { name: "peer: AI SDK pruneMessages", create: () => createPruneMessagesPeer() },
    { name: BASE_AGENT, create: (window) => createBaseAgentBaseline(window, maxOutput(window)) },
    { name: TEACHING, create: (window) => createTeachingBaseline(window, maxOutput(window)) },
    { name: SIMPLE, create: (window) => createSimplePolicyBaseline(window) },
    { name: "baseline: plain rule (records past 20K)", create: () => createPlainRuleBaseline() },
  ];
}
