import type { Message } from "@unforget/core";
import { createCalibrator, getModelPricing } from "@unforget/tokens";
import { createCacheBreakDetector } from "../cache/cache-break-detector.ts";
import { checkLadder, type LayerRequest } from "../layers/layer.ts";
import type { CompactionPolicy } from "../policy/compaction-policy.ts";
import { createWorkingSetPolicy } from "../policy/working-set-policy.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import { createModelSummarizer } from "../summary/model-summarizer.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import {
  clearablePredicate,
  type RetentionLookup,
  retentionLookup,
  withCompactableTools,
} from "../tool-outputs/compactable-tools.ts";
import { createOutputSaver } from "../tool-outputs/output-saver.ts";
import { createBreakers } from "./circuit-breaker.ts";
import { createContextEvents } from "./context-events.ts";
import type { ContextManagerOptions } from "./context-manager-options.ts";
import { createContextSize } from "./context-size.ts";
import { ContextView } from "./context-view.ts";
import { createDefaultLayers } from "./default-ladder.ts";
import type { ManagerCore, WindowLevels } from "./ladder.ts";
import { createPins } from "./pins.ts";
import { createRequestShape } from "./request-shape.ts";

/** The default policy: the working set, told the ladder's settings, the cache's lifetime and the model's prices. */
function defaultPolicy(options: ContextManagerOptions, retention: RetentionLookup): CompactionPolicy {
  const config = options.config ?? {};
  const collapse = config.collapse || undefined;
  return createWorkingSetPolicy({
    ...config.cheapLayers,
    ...(config.earlyMark !== undefined ? { earlyMark: config.earlyMark } : {}),
    ...(config.cacheTtl ? { cacheTtl: config.cacheTtl } : {}),
    ...(collapse?.protectRounds !== undefined ? { protectRounds: collapse.protectRounds } : {}),
    compactableTools: clearablePredicate(
      withCompactableTools(retention, collapse?.compactableTools),
      options.sessionDir,
    ),
    pricing: options.pricing ?? getModelPricing(options.model),
  });
}

/**
 * The tools whose results collapse or microcompact may still change (by each one's `compactableTools`, the
 * retention and the session folder): what the settled prefix must end before.
 */
export function changedByCheapLayers(
  options: ContextManagerOptions,
  retention: RetentionLookup,
): (toolName: string) => boolean {
  const config = options.config ?? {};
  const overrides = [
    (config.collapse || undefined)?.compactableTools,
    (config.microcompact || undefined)?.compactableTools,
  ];
  const predicates = overrides.map((override) =>
    clearablePredicate(withCompactableTools(retention, override), options.sessionDir),
  );
  return (name) => predicates.some((clearable) => clearable(name));
}

/** The parts every other part of the manager uses: the view, the count, events, breakers, the ladder and its policy. */
export function createCore(
  options: ContextManagerOptions,
  window: { readonly levels: WindowLevels; learn(error: unknown): void },
): ManagerCore {
  const config = options.config ?? {};
  const events = createContextEvents({
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.transcript?.path ? { transcriptPath: options.transcript.path } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  const clock = options.clock ?? Date.now;
  const view = new ContextView({
    clock,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.transcript ? { sink: options.transcript } : {}),
    ...(options.idFactory ? { idFactory: options.idFactory } : {}),
    ...(options.resume ? { resume: options.resume } : {}),
    ...(options.retainEntries ? { retain: options.retainEntries } : {}),
  });
  const extractive = createExtractiveSummarizer();
  const primary =
    options.summarizer ??
    (options.provider
      ? createModelSummarizer({ provider: options.provider, model: options.model })
      : extractive);
  const fallback = options.fallbackSummarizer ?? extractive;
  const retention = retentionLookup(options.resultRetention);
  const defaults = createDefaultLayers(
    config,
    options.sessionMemory ? { sessionMemory: options.sessionMemory } : {},
  );
  return {
    options,
    config,
    layers: checkLadder(
      typeof config.layers === "function" ? config.layers(defaults) : (config.layers ?? defaults),
    ),
    policy: config.policy ?? defaultPolicy(options, retention),
    view,
    size: createContextSize(view, options.calibrator ?? createCalibrator(), {
      providerId: options.provider?.providerId ?? "offline",
      model: options.model,
    }),
    events,
    breakers: createBreakers(
      {
        ...(config.breakerThreshold !== undefined ? { threshold: config.breakerThreshold } : {}),
        ...(config.breakerCoolDownCalls !== undefined ? { coolDownCalls: config.breakerCoolDownCalls } : {}),
      },
      events,
    ),
    shape: createRequestShape(view, options.request),
    cacheBreaks: createCacheBreakDetector(),
    summarizer: primary === fallback ? primary : learningFromRefusals(primary, window),
    fallbackSummarizer: fallback,
    retention,
    ...(options.sessionDir ? { outputs: createOutputSaver(options.sessionDir, retention) } : {}),
    clock,
    timer: options.timer ?? (() => performance.now()),
    levels: () => window.levels,
    pins: createPins(view, events, () => window.levels.contextWindow, config.pins?.maxShare, options.resume),
  };
}

/** What the manager keeps between calls besides the view. */
export interface SessionState {
  /** Layers asked for by name (the tools), run at the next `prepare`. */
  pending: Map<string, LayerRequest>;
  /** Recovery rounds in the current turn. */
  recoveries: number;
  /** The context's size when the previous request was returned. */
  lastTokens: number | undefined;
  /** Where the settled part of the view ends (remembered from call to call). */
  settled: (messages: readonly Message[]) => number;
}

/** A summariser whose prompt-too-long refusals teach the window what they state (then passed on for head truncation). */
function learningFromRefusals(summarizer: Summarizer, window: { learn(error: unknown): void }): Summarizer {
  return {
    name: summarizer.name,
    ...(summarizer.boundedByModelWindow ? { boundedByModelWindow: true } : {}),
    async summarize(request) {
      try {
        return await summarizer.summarize(request);
      } catch (error) {
        window.learn(error);
        throw error;
      }
    },
  };
}
