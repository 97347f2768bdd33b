import {
  type ContextManagementConfig,
  getModelLimits,
  type Message,
  PromptTooLongError,
  type RequestMessage,
} from "@unforget/core";
import {
  type ContextPolicy,
  createCalibrator,
  createContextPolicy,
  DEFAULT_PADDING,
  getModelPricing,
} from "@unforget/tokens";
import type { TranscriptEntry } from "@unforget/transcript";
import { createCacheBreakDetector } from "../cache/cache-break-detector.ts";
import { createChangeableMessages, createSettledTracker, settledBlocks } from "../cache/settled-prefix.ts";
import { CompactionDisabledError, ContextOverflowError } from "../compact-error.ts";
import { estimateTokens, isUserAuthored } from "../conversation/conversation.ts";
import { MAX_RECOVERIES_PER_TURN, REACTIVE_DRAIN_MARGIN } from "../defaults.ts";
import {
  checkLadder,
  type Layer,
  type LayerRequest,
  SUMMARY_REQUEST,
  type SummaryLayer,
} from "../layers/layer.ts";
import type { CompactionPolicy, WorkingSetLevels } from "../policy/compaction-policy.ts";
import { createWorkingSetPolicy } from "../policy/working-set-policy.ts";
import type { CompactRange } from "../summary/compaction-outcome.ts";
import { createExtractiveSummarizer } from "../summary/extractive-summarizer.ts";
import { createModelSummarizer } from "../summary/model-summarizer.ts";
import type { Summarizer } from "../summary/summarizer.ts";
import { createSummaryPipeline, type SummaryPipeline } from "../summary/summary-pipeline.ts";
import {
  clearablePredicate,
  type RetentionLookup,
  retentionLookup,
  withCompactableTools,
} from "../tool-outputs/compactable-tools.ts";
import { createBreakers } from "./circuit-breaker.ts";
import {
  type CompactionPreview,
  type ContextEventListener,
  createContextEvents,
  type DeclinedCompaction,
  type LayerReport,
} from "./context-events.ts";
import type { ContextManagerOptions, PrepareOptions } from "./context-manager-options.ts";
import { createContextSize } from "./context-size.ts";
import { ContextView } from "./context-view.ts";
import { createDefaultLayers } from "./default-ladder.ts";
import {
  contextFor,
  type LadderCall,
  type ManagerCore,
  requestFor,
  runLadder,
  startCall,
  type WindowLevels,
} from "./ladder.ts";
import { buildContextManagement, supportsNativeContext } from "./native-context.ts";
import { createRequestShape } from "./request-shape.ts";
import { createSessionStats } from "./session-stats.ts";

export interface ContextStatus {
  /** Context size now, in tokens (usage-anchored where possible). */
  tokens: number;
  contextWindow: number;
  effectiveWindow: number;
  /** Size at which the summaries are due. */
  threshold: number;
  /**
   * Size at which the emergency path runs before a request goes out (even against a PreCompact veto); a request
   * is refused only when it leaves the reply no room (`effectiveWindow`).
   */
  blockingLimit: number;
  percentUsed: number;
  /** Turns until the threshold at the recent rate of growth; undefined until the rate is known. */
  turnsUntilCompaction: number | undefined;
  /** Summaries so far (the summary layer, session notes, reactive and manual ones): the "compactions" of reports. */
  compactions: number;
  /** Summaries in a row that came within three turns of the previous one. */
  recompactionChain: number;
  /** Consecutive failures per layer (a layer at the breaker threshold is skipped until its cool-down ends). */
  failures: Record<string, number>;
  /** The working set's ceiling and floor, when the policy keeps one (the default does). */
  workingSet?: WorkingSetLevels;
}

export interface PrepareResult {
  /** The request's `messages`: projected, same-role neighbours merged, ready to send. */
  messages: RequestMessage[];
  /** The projected messages, with ids (what the transcript projects to). */
  projected: Message[];
  /**
   * Blocks at the start of `messages` that no cheap layer will change before the next summary: a cache
   * breakpoint on the last of them (`withCacheBreakpoints(prompt, { settledBlocks })`) keeps them cached
   * when the cheap layers fold what follows. 0 or absent when nothing is settled.
   */
  settledBlocks?: number;
  /**
   * Messages at the start of `projected` that no cheap layer will change before the next summary: a host that
   * sends its own messages puts the breakpoint on the last of them (what the adapters do). 0 when none is.
   */
  settledMessages?: number;
  /** Context size before and after this call's layers. */
  tokensBefore: number;
  tokens: number;
  /** What each layer did, in order (empty when nothing fired). */
  actions: LayerReport[];
  /** Summaries that were written but not applied, and why (a manual `compact()` that changed nothing). */
  declined?: DeclinedCompaction[];
  /** What a compaction asked for as a preview would do (`compact(…, { preview: true })`); nothing was applied. */
  preview?: CompactionPreview;
  /** Provider-side context management to put on the request, when a native strategy is on. */
  contextManagement?: ContextManagementConfig;
  status: ContextStatus;
}

export interface CompactOptions {
  /** Extra instructions for this compaction only (never carried across the boundary). */
  instructions?: string;
  /** A partial compaction: summarise before `upTo`, or from `from` on. */
  range?: CompactRange;
  /**
   * Writes the summary and measures what it would leave, and applies nothing (no layer edits, no entry, no
   * SessionStart, no breaker counts): the result's `preview` holds it. The summariser is called as for a compaction.
   */
  preview?: boolean;
}

/** The ladder, composed: call `prepare` before every model call and `recover` after a prompt-too-long error. */
export interface ContextManager {
  /**
   * Called before every model call with the whole conversation (the caller's list, only ever appended to).
   * Records new messages, runs the layers the policy says are due (cheap first), and resolves to what to send.
   * Each layer runs at most once per call. At the blocking limit the summary runs even against a PreCompact
   * veto. Rejects with `CompactionDisabledError` when proactive compaction is off and the context is at the
   * blocking limit, and with `ContextOverflowError` when nothing leaves the reply room in the window.
   */
  prepare(messages: readonly Message[], options?: PrepareOptions): Promise<PrepareResult>;
  /**
   * Called after a request failed with a prompt-too-long error: drains collapse, then summarises all but the
   * newest messages, until the request fits what the provider said (up to three rounds a turn). Resolves to
   * a request under it; rejects with `ContextOverflowError` saying why when that is not possible (the
   * transcript intact), or with `CompactionDisabledError` when emergency compaction is off.
   */
  recover(error: unknown, options?: PrepareOptions): Promise<PrepareResult>;
  /**
   * A manual compaction now (the user's `/compact`) of the conversation (the same list `prepare` takes);
   * never fails for being too long to summarise. The instructions apply to this compaction only.
   */
  compact(messages: readonly Message[], options?: CompactOptions & PrepareOptions): Promise<PrepareResult>;
  /** Asks for a compaction before the next model call (the model-callable compact tool uses this). */
  requestCompaction(instructions?: string): void;
  /** Asks for a snip before the next model call, keeping the most recent messages (the snip tool uses this). */
  requestSnip(keepRecentMessages: number): void;
  /** Records session metadata (title, tags, app data); it is re-appended after every compaction. */
  recordMetadata(metadata: {
    title?: string;
    tags?: string[];
    data?: Record<string, unknown>;
  }): Promise<void>;
  /** The current context state; cheap. */
  status(): ContextStatus;
  /** The ladder this manager runs, in order: names, labels and colours for tables and reports. */
  readonly layers: readonly Layer[];
  /** Everything the manager has recorded, in order (also written to the transcript sink). */
  readonly entries: readonly TranscriptEntry[];
  /** Subscribes to events; returns the unsubscribe function. */
  on(listener: ContextEventListener): () => void;
}

/**
 * Creates the manager of one session's context. See `ContextManagerOptions` for what it uses; with only a
 * model and limits it works offline (extractive summaries, no provider).
 */
export function createContextManager(options: ContextManagerOptions): ContextManager {
  const window = createWindow(options);
  const core = createCore(options, window);
  const stats = createSessionStats();
  const pipeline = createSummaryPipeline(core, () => stats.compacted());
  const session: SessionState = {
    pending: new Map(),
    recoveries: 0,
    lastTokens: undefined,
    settled: createSettledTracker(createChangeableMessages(changedByCheapLayers(options, core.retention))),
  };
  const status = (tokens = core.size.tokens()) => statusOf(core, window.policy, stats, tokens);
  const finish = (call: LadderCall) => finishCall(core, call, session, status);

  return {
    prepare: (messages, prepareOptions = {}) =>
      prepareCall(core, pipeline, stats, session, messages, prepareOptions).then(finish),
    async recover(error, prepareOptions = {}) {
      window.learn(error);
      window.refresh();
      return finish(await recoverCall(core, pipeline, session, error, prepareOptions));
    },
    async compact(messages, compactOptions = {}) {
      observe(core, core.view.sync(messages));
      core.shape.set(compactOptions);
      if (!core.view.view.some((message) => message.role === "assistant")) {
        // No reply yet: there is nothing a summary could stand for, so no layer runs and no model is called.
        const empty = startCall(core, {
          trigger: "manual",
          added: 0,
          firstNew: core.view.view.length,
          options: compactOptions,
        });
        empty.declined.push({
          layer: SUMMARY_REQUEST,
          reason: "There is nothing to compact yet: the conversation has no reply to summarise.",
        });
        return finish(empty);
      }
      const request: LayerRequest = {
        ...(compactOptions.instructions ? { instructions: compactOptions.instructions } : {}),
        ...(compactOptions.range ? { range: compactOptions.range } : {}),
      };
      const call = startCall(core, {
        trigger: "manual",
        added: 0,
        firstNew: core.view.view.length,
        requested: new Map([[SUMMARY_REQUEST, request]]),
        options: compactOptions,
      });
      if (compactOptions.preview) {
        // Only the summaries run: a cheap layer's edits would be applied.
        call.preview = "asked";
        await runLadder(
          core,
          pipeline,
          call,
          (layer) => layer.kind === "summary" && core.policy.due(layer, call.state),
        );
        return finish(call);
      }
      await runLadder(core, pipeline, call, (layer) => core.policy.due(layer, call.state));
      return finish(call);
    },
    requestCompaction(instructions) {
      session.pending.set(SUMMARY_REQUEST, instructions ? { instructions } : {});
    },
    requestSnip(keepRecentMessages) {
      session.pending.set("snip", { keepRecentMessages: Math.max(1, Math.floor(keepRecentMessages)) });
    },
    async recordMetadata(metadata) {
      core.view.appendMetadata(metadata);
      await core.view.flush();
    },
    status: () => status(),
    layers: core.layers,
    get entries() {
      return core.view.entries;
    },
    on: (listener) => core.events.on(listener),
  };
}

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
function changedByCheapLayers(
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
function createCore(options: ContextManagerOptions, window: ReturnType<typeof createWindow>): ManagerCore {
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
    shape: createRequestShape(view),
    cacheBreaks: createCacheBreakDetector(),
    summarizer: primary === fallback ? primary : learningFromRefusals(primary, window),
    fallbackSummarizer: fallback,
    retention,
    clock,
    timer: options.timer ?? (() => performance.now()),
    levels: () => window.levels,
  };
}

/** What the manager keeps between calls besides the view. */
interface SessionState {
  /** Layers asked for by name (the tools), run at the next `prepare`. */
  pending: Map<string, LayerRequest>;
  /** Recovery rounds in the current turn. */
  recoveries: number;
  /** The context's size when the previous request was returned. */
  lastTokens: number | undefined;
  /** Where the settled part of the view ends (remembered from call to call). */
  settled: (messages: readonly Message[]) => number;
}

/**
 * The window's levels, from the limits given, the provider's (learned ones too) or core's table, capped by what
 * a refusal stated (`prompt is too long: N > M`): a host without a provider learns the real window that way.
 */
function createWindow(options: ContextManagerOptions) {
  let cap: number | undefined;
  const compute = () => {
    const given =
      options.limits ?? options.provider?.getModelLimits(options.model) ?? getModelLimits(options.model);
    const limits = cap === undefined || cap >= given.contextWindow ? given : { ...given, contextWindow: cap };
    const setting = options.config?.thresholds?.[options.model] ?? options.config?.threshold;
    const policy = createContextPolicy(limits, {
      env: {},
      ...(setting && "percent" in setting ? { autoCompactPercent: setting.percent } : {}),
    });
    const state = policy.evaluate(0);
    const threshold =
      setting && "tokens" in setting
        ? Math.min(state.autoCompactThreshold, Math.max(1, setting.tokens))
        : state.autoCompactThreshold;
    const levels: WindowLevels = {
      contextWindow: limits.contextWindow,
      effectiveWindow: state.effectiveWindow,
      threshold,
      blockingLimit: state.blockingLimit,
    };
    return { policy, levels };
  };
  let current = compute();
  return {
    get levels() {
      return current.levels;
    },
    get policy() {
      return current.policy;
    },
    /** Called after a prompt-too-long error: the provider may have learned a smaller window. */
    refresh() {
      current = compute();
    },
    /** Called with a refusal: one that states the maximum the model takes lowers the window to it from now on. */
    learn(error: unknown) {
      const limit = error instanceof PromptTooLongError ? error.limitTokens : undefined;
      if (limit === undefined || !Number.isSafeInteger(limit) || limit <= 0) return;
      if (limit >= current.levels.contextWindow) return;
      const previous = cap;
      cap = limit;
      try {
        current = compute();
      } catch {
        // A window too small to hold the output reserve is not one to work to: the refusal is handled as any.
        cap = previous;
      }
    },
  };
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

/** New responses: their usage re-anchors the count, calibrates the estimate and shows unexpected cache breaks. */
function observe(core: ManagerCore, added: readonly Message[]): void {
  core.size.observe(added);
  for (const message of added) {
    if (message.role !== "assistant" || !message.usage) continue;
    const broke = core.cacheBreaks.observe(message.usage);
    if (broke) core.events.emit({ type: "cache-break", ...broke });
  }
}

async function prepareCall(
  core: ManagerCore,
  pipeline: SummaryPipeline,
  stats: ReturnType<typeof createSessionStats>,
  session: SessionState,
  messages: readonly Message[],
  options: PrepareOptions,
): Promise<LadderCall> {
  const added = core.view.sync(messages);
  core.shape.set(options);
  if (added.some(isUserAuthored)) {
    session.recoveries = 0;
    stats.newTurn();
  } else if (added.some((message) => message.role === "assistant")) {
    // A response came back: the request the last recovery made went through. A long tool loop is one turn,
    // and its later refusals get their own recoveries.
    session.recoveries = 0;
  }
  observe(core, added);
  core.breakers.tick();
  const recursion = options.querySource === "compact" || options.querySource === "session_memory";
  const requested = recursion ? new Map<string, LayerRequest>() : session.pending;
  if (!recursion) session.pending = new Map();
  const call = startCall(core, {
    trigger: "auto",
    added: added.length,
    firstNew: core.view.view.length - added.length,
    requested,
    options,
    backgroundPending: pipeline.backgroundPending,
  });
  if (session.lastTokens !== undefined && added.length > 0)
    stats.grew(call.state.tokens - session.lastTokens);
  // A compaction's or a memory extraction's own call never compacts (it would recurse or deadlock).
  if (recursion) return call;
  const proactive = core.config.proactive !== "off";
  const plan = proactive
    ? await core.policy.plan({
        tokens: call.state.tokens,
        threshold: call.state.threshold,
        blockingLimit: call.state.blockingLimit,
        contextWindow: call.state.contextWindow,
        added: added.length,
        idleMs: call.state.idleMs,
        messages: core.view.view,
      })
    : undefined;
  if (plan) {
    call.state.batch = plan.batch;
    call.state.target = plan.target;
    call.state.minimumFreedTokens = plan.minimumFreedTokens;
  }
  // "Off" means off: with proactive compaction off only what was asked for by name runs.
  const due = (layer: Layer) =>
    !proactive && !requestFor(call, layer) ? false : core.policy.due(layer, call.state);
  await runLadder(core, pipeline, call, due);
  // The cheap layers broke the prompt cache anyway: a finished background summary goes in now if it helps.
  if (call.state.batch && call.state.acted.size > 0 && !call.summarized) await pipeline.spliceIfReady(call);
  if (
    proactive &&
    !call.summarized &&
    (await core.policy.startBackground?.({
      ...call.state,
      backgroundPending: pipeline.backgroundPending,
      cheapPassEstimate: () => cheapPassEstimate(core, call),
    }))
  ) {
    await pipeline.startBackground(call);
  }
  await guardWindow(core, pipeline, call, proactive);
  return call;
}

/**
 * The emergency path: at the blocking limit after the ladder ran (a summary was vetoed, failed, stalled or
 * did not make room) the summary runs again, on the fallback summariser, then a harder round if that was not
 * enough. A context that leaves the reply no room in the window (at or past the effective window) is never
 * returned: the call ends with ContextOverflowError.
 */
async function guardWindow(
  core: ManagerCore,
  pipeline: SummaryPipeline,
  call: LadderCall,
  proactive: boolean,
): Promise<void> {
  let tokens = core.size.tokens();
  // A cancelled call sends nothing: the caller ends its turn, and the next call compacts.
  if (tokens < call.state.blockingLimit || call.options.signal?.aborted) return;
  if (!proactive) {
    await core.view.flush();
    throw new CompactionDisabledError(
      "proactive",
      tokens,
      `The context is at ${tokens} tokens, at the blocking limit of this model's window, and proactive compaction is off (config.proactive = "off"), so the request was not sent. Compact by hand (compact()), turn proactive compaction on, or start a new session; nothing has been lost.`,
    );
  }
  // Whatever ran in this call (a summary too), the summary runs once more on the fallback summariser.
  const last = core.layers.filter((layer): layer is SummaryLayer => layer.kind === "summary").at(-1);
  if (last) {
    call.state.tokens = tokens;
    call.state.acted.delete(last.name);
    const reason = `emergency: context at ${tokens} tokens, over the blocking limit (${call.state.blockingLimit})`;
    await pipeline.run(call, [{ layer: last, reason }], { fallback: true });
    tokens = core.size.tokens();
  }
  if (tokens >= call.state.blockingLimit) tokens = await harderRound(core, pipeline, call);
  // Still at the blocking limit, yet the request and the reply reserved for it fit the window: it goes out (the
  // next call compacts again, with the newest round no longer newest). Only a request that leaves the reply no
  // room is refused.
  const usable = core.levels().effectiveWindow;
  if (tokens >= usable) {
    await core.view.flush();
    throw new ContextOverflowError(
      tokens,
      usable,
      `The context is at ${tokens} tokens, past the ${usable} this model's window leaves beside room for its reply (window ${call.state.contextWindow}), after every layer and a summary keeping only the newest round, so the request was not sent. Compact by hand (/compact in the REPL, compact() in the API), clear the conversation (/clear), shorten the newest message, or use a model with a larger window; the transcript is intact.`,
    );
  }
}

/**
 * The harder round at the blocking limit: the cheap layers as in recovery (no minimum to free, everything
 * but the newest round), then the fallback summary keeping only the newest messages. Returns the size after.
 */
async function harderRound(core: ManagerCore, pipeline: SummaryPipeline, call: LadderCall): Promise<number> {
  const tokens = core.size.tokens();
  const round = startCall(core, {
    trigger: "reactive",
    added: 0,
    firstNew: core.view.view.length,
    options: call.options,
  });
  round.state.target = Math.floor(call.state.blockingLimit * (1 - REACTIVE_DRAIN_MARGIN));
  await runLadder(core, pipeline, round, (layer) =>
    layer.kind === "edit" ? core.policy.due(layer, round.state) : false,
  );
  const last = core.layers.filter((layer): layer is SummaryLayer => layer.kind === "summary").at(-1);
  if (last && core.size.tokens() >= call.state.blockingLimit) {
    round.state.tokens = core.size.tokens();
    const reason = `emergency: context at ${tokens} tokens, still over the blocking limit (${call.state.blockingLimit}) after the fallback summary`;
    await pipeline.run(round, [{ layer: last, reason }], { fallback: true });
  }
  call.reports.push(...round.reports);
  return core.size.tokens();
}

function overflow(core: ManagerCore, tokens: number, limit: number, cause?: unknown): ContextOverflowError {
  const preamble = Math.ceil(core.view.preambleTokens * DEFAULT_PADDING);
  return new ContextOverflowError(
    tokens,
    limit,
    `The context is at ${tokens} tokens and cannot be brought under ${limit}: every layer has run, and what is left — the system prompt and tools (${preamble} tokens), the summary and the newest turn — does not fit. Shorten the system prompt or the tool list, give the model a larger window, or start a new session; the transcript is intact.`,
    cause === undefined ? undefined : { cause },
  );
}

/** Rounds of reactive compaction until the request fits what the provider said, each shrinking it. */
async function recoverCall(
  core: ManagerCore,
  pipeline: SummaryPipeline,
  session: SessionState,
  error: unknown,
  options: PrepareOptions,
): Promise<LadderCall> {
  if (!(error instanceof PromptTooLongError)) throw error;
  if (core.config.emergency === "off") {
    throw new CompactionDisabledError(
      "emergency",
      core.size.tokens(),
      `The provider refused the request as too long and emergency compaction is off (config.emergency = "off"), so nothing was compacted. Compact by hand (compact()) or turn emergency compaction on; the transcript is intact.`,
      { cause: error },
    );
  }
  const before = core.size.tokens();
  // What fits, on our count: the provider's limit in proportion to what it counted, less a margin.
  // (Numbers that say the request fits are no guide: the provider refused it all the same.)
  const ratio =
    error.actualTokens !== undefined &&
    error.limitTokens !== undefined &&
    error.actualTokens > error.limitTokens
      ? error.limitTokens / error.actualTokens
      : undefined;
  const fits = Math.floor(
    ratio !== undefined ? before * ratio : Math.min(before, core.levels().blockingLimit),
  );
  const target = Math.floor(Math.max(0, fits - before * REACTIVE_DRAIN_MARGIN));
  const reports: LayerReport[] = [];
  let call: LadderCall | undefined;
  while (core.size.tokens() > target) {
    if (session.recoveries >= MAX_RECOVERIES_PER_TURN) break;
    session.recoveries++;
    const tokens = core.size.tokens();
    call = startCall(core, { trigger: "reactive", added: 0, firstNew: core.view.view.length, options });
    call.state.target = target;
    const round = call;
    await runLadder(core, pipeline, round, (layer) => core.policy.due(layer, round.state));
    reports.push(...round.reports);
    if (core.size.tokens() >= tokens) break;
  }
  const after = core.size.tokens();
  if (!call || reports.length === 0 || after > fits) {
    await core.view.flush();
    throw call && reports.length > 0
      ? overflow(core, after, fits, error)
      : new ContextOverflowError(
          after,
          fits,
          `The provider refused the request as too long (${error.message}) and ${session.recoveries >= MAX_RECOVERIES_PER_TURN ? `the ${MAX_RECOVERIES_PER_TURN} recoveries of this turn are used up` : "nothing is left to compact: the newest turn and the system prompt are all that remains"}. Shorten the system prompt or the newest message, give the model a larger window, or start a new session; the transcript is intact.`,
          { cause: error },
        );
  }
  return { ...call, reports, tokensBefore: before };
}

/** A cheap estimate of what the cheap layers would leave if they ran now as a batch (nothing is recorded). */
async function cheapPassEstimate(core: ManagerCore, call: LadderCall): Promise<number> {
  const state = { ...call.state, batch: true, added: 0, requested: new Map(), acted: new Set<string>() };
  let messages = core.view.view;
  const before = estimateTokens(messages);
  for (const layer of core.layers) {
    if (layer.kind !== "edit" || !core.policy.due(layer, state)) continue;
    try {
      const result = await layer.run(messages, {
        ...contextFor(core, call, layer, "dry run"),
        ...state,
        dryRun: true,
      });
      messages = result.messages;
    } catch {
      // A dry run only estimates; a failing layer frees nothing.
    }
  }
  return Math.max(0, call.state.tokens - Math.round((before - estimateTokens(messages)) * DEFAULT_PADDING));
}

function statusOf(
  core: ManagerCore,
  policy: ContextPolicy,
  stats: ReturnType<typeof createSessionStats>,
  tokens: number,
): ContextStatus {
  const levels = core.levels();
  const rate = stats.growthRate;
  const workingSet = core.policy.levels?.();
  return {
    tokens,
    contextWindow: levels.contextWindow,
    effectiveWindow: levels.effectiveWindow,
    threshold: levels.threshold,
    blockingLimit: levels.blockingLimit,
    percentUsed: policy.evaluate(tokens).percentUsed,
    turnsUntilCompaction:
      rate === undefined || rate <= 0
        ? undefined
        : Math.max(0, Math.ceil((levels.threshold - tokens) / rate)),
    compactions: stats.compactions,
    recompactionChain: stats.chain,
    failures: core.breakers.failures(),
    ...(workingSet ? { workingSet } : {}),
  };
}

async function finishCall(
  core: ManagerCore,
  call: LadderCall,
  session: SessionState,
  status: (tokens: number) => ContextStatus,
): Promise<PrepareResult> {
  const tokens = core.size.tokens();
  const messages = core.view.requestMessages();
  const settled = session.settled(core.view.view);
  const result: PrepareResult = {
    messages,
    projected: core.view.view,
    settledBlocks: settledBlocks(core.view.view, settled),
    settledMessages: settled,
    tokensBefore: call.tokensBefore,
    tokens,
    actions: call.reports,
    ...(call.declined.length > 0 ? { declined: call.declined } : {}),
    ...(typeof call.preview === "object" ? { preview: call.preview } : {}),
    status: status(tokens),
  };
  const native = core.config.native;
  if (native && native.mode !== "off" && supportsNativeContext(core.options.provider)) {
    const view = core.view.view;
    const last = view.findLast((message) => message.role === "assistant");
    const management = buildContextManagement(native, {
      idleMs: last ? core.clock() - Date.parse(last.timestamp) : 0,
      contextWindow: core.levels().contextWindow,
      hasThinking: view.some((message) => message.content.some((block) => block.type === "thinking")),
    });
    if (management) result.contextManagement = management;
  }
  core.size.recordRequest();
  session.lastTokens = tokens;
  await core.view.flush();
  return result;
}
