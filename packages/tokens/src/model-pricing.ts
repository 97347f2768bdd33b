import { canonicalModelId, type Usage } from "@unforget/core";

/** What one model costs, in US dollars per million tokens. */
export interface ModelPricing {
  /** Uncached input tokens. */
  input: number;
  /** Output tokens (thinking included). */
  output: number;
  /** Tokens written to the prompt cache with the 5-minute lifetime; default 1.25 × `input`. */
  cacheWrite5m?: number;
  /** Tokens written to the prompt cache with the 1-hour lifetime; default 2 × `input`. */
  cacheWrite1h?: number;
  /** Tokens read from the prompt cache (hits and refreshes); default 0.1 × `input`. */
  cacheRead?: number;
}

/** A model's prices with every rate filled in, and the table entry they came from. */
export interface ResolvedModelPricing extends Required<ModelPricing> {
  /** The table entry that matched (a canonical family id), or the canonical id when none did. */
  model: string;
  /** False when the model was not recognised and `UNKNOWN_MODEL_PRICING` was used. */
  known: boolean;
}

/** Anthropic's prompt-cache multipliers of the input price: a 5-minute write, a 1-hour write, a read. */
export const CACHE_WRITE_5M_MULTIPLIER = 1.25;
export const CACHE_WRITE_1H_MULTIPLIER = 2;
export const CACHE_READ_MULTIPLIER = 0.1;

/**
 * List prices of the Claude family on the Anthropic API (platform.claude.com, "Model pricing"), keyed by
 * canonical family id; the longest matching prefix wins, as in core's model limits. Bedrock and Vertex list
 * the same prices for these models. Batch discounts and long-context surcharges are not modelled.
 */
export const DEFAULT_MODEL_PRICING: Readonly<Record<string, ModelPricing>> = Object.freeze({
  "claude-fable-5": { input: 10, output: 50 },
  "claude-fable-5-1": { input: 10, output: 50, cacheRead: 0.25 },
  "claude-mythos-5": { input: 10, output: 50 },
  "claude-mythos-5-1": { input: 10, output: 50, cacheRead: 0.25 },
  "claude-opus-5": { input: 5, output: 25 },
  "claude-opus-4-8": { input: 5, output: 25 },
  "claude-opus-4-7": { input: 5, output: 25 },
  "claude-opus-4-6": { input: 5, output: 25 },
  "claude-opus-4-5": { input: 5, output: 25 },
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4": { input: 15, output: 75 },
  "claude-3-opus": { input: 15, output: 75 },
  "claude-sonnet-5": { input: 2, output: 10 },
  "claude-sonnet-4-6": { input: 3, output: 15 },
  "claude-sonnet-4-5": { input: 3, output: 15 },
  "claude-sonnet-4": { input: 3, output: 15 },
  "claude-3-7-sonnet": { input: 3, output: 15 },
  "claude-3-5-sonnet": { input: 3, output: 15 },
  "claude-haiku-4-5": { input: 1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  "claude-3-haiku": { input: 0.25, output: 1.25, cacheWrite5m: 0.3, cacheWrite1h: 0.5, cacheRead: 0.03 },
});

/** Prices assumed for a model the table does not know: the Sonnet tier, the middle of the family. */
export const UNKNOWN_MODEL_PRICING: Readonly<ModelPricing> = Object.freeze({ input: 3, output: 15 });

/** Fills in the cache rates a pricing leaves out, from Anthropic's multipliers of its input price. */
export function resolvePricing(pricing: ModelPricing): Required<ModelPricing> {
  // Rounded to a billionth of a dollar, so that 3 × 0.1 reads as the 0.3 of the price list.
  const times = (multiplier: number) => Math.round(pricing.input * multiplier * 1e9) / 1e9;
  return {
    input: pricing.input,
    output: pricing.output,
    cacheWrite5m: pricing.cacheWrite5m ?? times(CACHE_WRITE_5M_MULTIPLIER),
    cacheWrite1h: pricing.cacheWrite1h ?? times(CACHE_WRITE_1H_MULTIPLIER),
    cacheRead: pricing.cacheRead ?? times(CACHE_READ_MULTIPLIER),
  };
}

/**
 * The prices of any provider's model id (`us.anthropic.claude-sonnet-4-5-20250929-v1:0` is Sonnet 4.5).
 * `overrides` (by canonical family id or exact id) win over the defaults; an unknown model gets
 * `UNKNOWN_MODEL_PRICING` with `known: false`. Never throws.
 */
export function getModelPricing(
  model: string,
  overrides: Readonly<Record<string, ModelPricing>> = {},
): ResolvedModelPricing {
  const exact = overrides[model] ?? overrides[model.trim().toLowerCase()];
  if (exact) return { model, known: true, ...resolvePricing(exact) };
  const canonical = canonicalModelId(model);
  let best: [string, ModelPricing] | undefined;
  for (const table of [DEFAULT_MODEL_PRICING, overrides]) {
    for (const [prefix, pricing] of Object.entries(table)) {
      const matches =
        canonical === prefix || canonical.startsWith(`${prefix}-`) || canonical.startsWith(`${prefix}.`);
      // An override of the same family replaces the default: ties go to the later table.
      if (matches && (!best || prefix.length >= best[0].length)) best = [prefix, pricing];
    }
  }
  if (!best) return { model: canonical, known: false, ...resolvePricing(UNKNOWN_MODEL_PRICING) };
  return { model: best[0], known: true, ...resolvePricing(best[1]) };
}

/** What one response cost, in US dollars, by kind of token. */
export interface UsageCost {
  /** Uncached input. */
  input: number;
  /** Prompt-cache writes (both lifetimes). */
  cacheWrite: number;
  /** Prompt-cache reads. */
  cacheRead: number;
  output: number;
  total: number;
}

/**
 * What a response's usage costs at a model's prices. Cache writes split by lifetime are priced each at its
 * rate (unsplit writes at the 5-minute rate); a response with several sampling passes (`iterations`, from
 * server-side compaction) is priced as the sum of its passes, which the top-level fields leave out.
 */
export function usageCost(usage: Usage, pricing: ModelPricing): UsageCost {
  const rates = resolvePricing(pricing);
  const passes = usage.iterations && usage.iterations.length > 0 ? usage.iterations : [usage];
  let input = 0;
  let cacheWrite = 0;
  let cacheRead = 0;
  let output = 0;
  for (const pass of passes) {
    input += pass.inputTokens * rates.input;
    cacheRead += pass.cacheReadInputTokens * rates.cacheRead;
    output += pass.outputTokens * rates.output;
    const split = pass === usage ? usage.cacheCreation : undefined;
    if (split && split.ephemeral5mInputTokens + split.ephemeral1hInputTokens > 0) {
      const rest = Math.max(
        0,
        pass.cacheCreationInputTokens - split.ephemeral5mInputTokens - split.ephemeral1hInputTokens,
      );
      cacheWrite +=
        (split.ephemeral5mInputTokens + rest) * rates.cacheWrite5m +
        split.ephemeral1hInputTokens * rates.cacheWrite1h;
    } else {
      cacheWrite += pass.cacheCreationInputTokens * rates.cacheWrite5m;
    }
  }
  const perToken = (dollarsPerMillion: number) => dollarsPerMillion / 1_000_000;
  const cost = {
    input: perToken(input),
    cacheWrite: perToken(cacheWrite),
    cacheRead: perToken(cacheRead),
    output: perToken(output),
  };
  return { ...cost, total: cost.input + cost.cacheWrite + cost.cacheRead + cost.output };
}
