import type { SessionMemorySource } from "@unforget/core";
import { createCollapseLayer } from "./collapse-context.ts";
import { createSummaryLayer } from "./compact-conversation.ts";
import type { ContextManagerConfig } from "./context-manager-options.ts";
import type { Layer } from "./layer.ts";
import { createMicrocompactLayer } from "./microcompact.ts";
import { createObservationMaskingLayer } from "./observation-masking.ts";
import { CACHE_TTL_MS } from "./prompt-cache.ts";
import { createSessionMemoryLayer } from "./session-memory-compact.ts";
import { createSnipLayer } from "./snip-compact.ts";
import { createToolResultBudgetLayer } from "./tool-result-budget.ts";

/**
 * The default ladder, cheapest first: tool-result budget, microcompact, observation masking (opt-in), snip
 * (the tool; by size when configured), collapse, session memory (with a `sessionMemory` source), summary.
 * A layer whose config is `false` is left out.
 */
export function createDefaultLayers(
  config: ContextManagerConfig = {},
  options: { sessionMemory?: SessionMemorySource } = {},
): Layer[] {
  const layers: Layer[] = [];
  if (config.toolResultBudget !== false)
    layers.push(createToolResultBudgetLayer(config.toolResultBudget ?? {}));
  if (config.microcompact !== false) layers.push(createMicrocompactLayer(config.microcompact ?? {}));
  if (config.observationMasking) layers.push(createObservationMaskingLayer(config.observationMasking));
  if (config.snip !== false) layers.push(createSnipLayer(config.snip || undefined));
  if (config.collapse !== false) {
    const protectShare = config.cheapLayers?.protectShare;
    layers.push(
      createCollapseLayer({
        digestAfterIdleMs: CACHE_TTL_MS[config.cacheTtl ?? "5m"],
        ...config.collapse,
        ...(protectShare !== undefined ? { protectShare } : {}),
      }),
    );
  }
  if (options.sessionMemory && config.sessionMemoryCompact !== false) {
    layers.push(
      createSessionMemoryLayer({
        source: options.sessionMemory,
        ...(config.sessionMemoryCompact?.keep ? { keep: config.sessionMemoryCompact.keep } : {}),
      }),
    );
  }
  layers.push(createSummaryLayer(config.summary?.keep ? { keep: config.summary.keep } : {}));
  return layers;
}
