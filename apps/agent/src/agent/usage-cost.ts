import { canonicalModelId, type Usage } from "@unforget/core";

/**
 * US dollars per million tokens: uncached input and output (cache writes 1.25× the input price for a 5-minute
 * life, 2× for one hour; reads 0.1×).
 */
const PRICES: readonly (readonly [prefix: string, input: number, output: number])[] = [
  ["claude-opus-4-1", 15, 75],
  ["claude-opus-4-0", 15, 75],
  ["claude-opus-4", 5, 25],
  ["claude-sonnet-4", 3, 15],
  ["claude-3-7-sonnet", 3, 15],
  ["claude-haiku-4", 1, 5],
  ["claude-3-5-haiku", 0.8, 4],
];

/** Prices assumed for a model the table does not know (the Sonnet tier). */
const UNKNOWN: readonly [number, number] = [3, 15];

/**
 * What a turn's usage costs at list prices, for `-p`'s `total_cost_usd` (an estimate: Anthropic's list prices,
 * which Bedrock and Vertex match for Claude; other models are priced as Sonnet).
 */
export function usageCostUsd(model: string, usage: Usage): number {
  const id = canonicalModelId(model);
  const [input, output] = PRICES.find(([prefix]) => id.startsWith(prefix))?.slice(1) ?? UNKNOWN;
  // Writes of a one-hour life cost more; the split, when the provider reports it, says how many were.
  const hourWrites = Math.min(
    usage.cacheCreation?.ephemeral1hInputTokens ?? 0,
    usage.cacheCreationInputTokens,
  );
  const dollars =
    (usage.inputTokens * (input as number) +
      (usage.cacheCreationInputTokens - hourWrites) * (input as number) * 1.25 +
      hourWrites * (input as number) * 2 +
      usage.cacheReadInputTokens * (input as number) * 0.1 +
      usage.outputTokens * (output as number)) /
    1_000_000;
  return Math.round(dollars * 1e6) / 1e6;
}
