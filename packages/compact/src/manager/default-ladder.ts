import type { SessionMemorySource } from "@unforget/core";
import { CACHE_TTL_MS } from "../cache/prompt-cache.ts";
import { createCollapseLayer } from "../layers/collapse-context.ts";
import type { Layer } from "../layers/layer.ts";
import { createMicrocompactLayer } from "../layers/microcompact.ts";
import { createObservationMaskingLayer } from "../layers/observation-masking.ts";
import { createSessionMemoryLayer } from "../layers/session-memory-compact.ts";
import { createSnipLayer } from "../layers/snip-compact.ts";
import { createToolResultBudgetLayer } from "../layers/tool-result-budget.ts";
import { createSummaryLayer } from "../summary/compact-conversation.ts";
import type { ContextManagerConfig } from "./context-manager-options.ts";

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
