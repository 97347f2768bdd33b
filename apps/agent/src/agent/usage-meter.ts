import {
  createUsage,
  type ModelProvider,
  type ModelResponse,
  type ModelStream,
  type ModelStreamEvent,
  type Usage,
} from "@unforget/core";
import { usageCostUsd } from "./usage-cost.ts";

/** What the model calls of a run used, by model: the turn's own calls and the summariser's alike. */
export interface UsageMeter {
  /** The provider with every call's usage recorded under the request's model (the same calls, unchanged). */
  wrap(provider: ModelProvider): ModelProvider;
  /** The summed usage of each model called so far. */
  byModel(): ReadonlyMap<string, Usage>;
}

export function createUsageMeter(): UsageMeter {
  const totals = new Map<string, Usage>();
  const record = (model: string, usage: Usage) => {
    const total = totals.get(model) ?? createUsage();
    const billed = billedUsage(usage);
    total.inputTokens += billed.inputTokens;
    total.outputTokens += billed.outputTokens;
    total.cacheCreationInputTokens += billed.cacheCreationInputTokens;
    total.cacheReadInputTokens += billed.cacheReadInputTokens;
    if (billed.cacheCreation) {
      const split = total.cacheCreation ?? { ephemeral5mInputTokens: 0, ephemeral1hInputTokens: 0 };
      split.ephemeral5mInputTokens += billed.cacheCreation.ephemeral5mInputTokens;
      split.ephemeral1hInputTokens += billed.cacheCreation.ephemeral1hInputTokens;
      total.cacheCreation = split;
    }
    totals.set(model, total);
  };
  return {
    wrap: (provider) => meteredProvider(provider, record),
    byModel: () => totals,
  };
}

/**
 * What a response is billed for: with a server compaction the top-level counts leave the compaction's pass out, and
 * the passes (`iterations`) hold every sampling pass, so they are summed instead. The cache-write split by
 * time-to-live is kept only where it describes the counts used (no passes).
 */
function billedUsage(usage: Usage): Usage {
  const passes = usage.iterations;
  if (!passes || passes.length === 0) return usage;
  const billed = createUsage();
  for (const pass of passes) {
    billed.inputTokens += pass.inputTokens;
    billed.outputTokens += pass.outputTokens;
    billed.cacheCreationInputTokens += pass.cacheCreationInputTokens;
    billed.cacheReadInputTokens += pass.cacheReadInputTokens;
  }
  return billed;
}

/** Claude Code's `modelUsage` of the result object: each model's tokens and what they cost. */
export function modelUsageOf(byModel: ReadonlyMap<string, Usage>): Record<string, Record<string, number>> {
  const result: Record<string, Record<string, number>> = {};
  for (const [model, usage] of byModel) {
    result[model] = {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadInputTokens: usage.cacheReadInputTokens,
      cacheCreationInputTokens: usage.cacheCreationInputTokens,
      costUSD: usageCostUsd(model, usage),
    };
  }
  return result;
}

/** The sum of each model's usage at its own price. */
export function totalCostUsd(byModel: ReadonlyMap<string, Usage>): number {
  let dollars = 0;
  for (const [model, usage] of byModel) dollars += usageCostUsd(model, usage);
  return Math.round(dollars * 1e6) / 1e6;
}

function meteredProvider(
  provider: ModelProvider,
  record: (model: string, usage: Usage) => void,
): ModelProvider {
  return {
    // What else the provider carries (as `withContextWindow` keeps it), then the contract's members delegated.
    ...provider,
    specificationVersion: provider.specificationVersion,
    providerId: provider.providerId,
    capabilities: provider.capabilities,
    countTokens: (request, options) => provider.countTokens(request, options),
    getModelLimits: (model) => provider.getModelLimits(model),
    async createMessage(request, options) {
      const response = await provider.createMessage(request, options);
      record(request.model, response.usage);
      return response;
    },
    streamMessage(request, options) {
      return meteredStream(provider.streamMessage(request, options), (usage) => record(request.model, usage));
    },
  };
}

/**
 * The stream as it comes, its usage recorded once: from the events when it is read (a stream cut after its start
 * is billed for what it said), else from `finalResponse()`.
 */
function meteredStream(stream: ModelStream, record: (usage: Usage) => void): ModelStream {
  let recorded = false;
  const once = (usage: Usage) => {
    if (recorded) return;
    recorded = true;
    record(usage);
  };
  return {
    async *[Symbol.asyncIterator](): AsyncGenerator<ModelStreamEvent> {
      let usage: Usage | undefined;
      try {
        for await (const event of stream) {
          if (event.type === "message_start") usage = { ...event.usage };
          else if (event.type === "message_delta" && event.usage && usage)
            for (const [key, value] of Object.entries(event.usage)) {
              if (typeof value === "number") (usage as unknown as Record<string, number>)[key] = value;
              // The passes of a server compaction arrive with the final counts.
              else if (key === "iterations" && Array.isArray(value)) usage.iterations = value;
              else if (key === "cacheCreation" && event.usage.cacheCreation)
                usage.cacheCreation = { ...event.usage.cacheCreation };
            }
          yield event;
        }
      } finally {
        if (usage) once(usage);
      }
    },
    async finalResponse(): Promise<ModelResponse> {
      const response = await stream.finalResponse();
      once(response.usage);
      return response;
    },
  };
}
