import {
  type ContextManagementConfig,
  getModelLimits,
  type Message,
  PromptTooLongError,
  type RequestMessage,
} from "@unforget/core";
import { type ContextPolicy, createContextPolicy } from "@unforget/tokens";
import type { TranscriptEntry } from "@unforget/transcript";
import { createChangeableMessages, createSettledTracker, settledBlocks } from "../cache/settled-prefix.ts";
import { type Layer, type LayerRequest, SUMMARY_REQUEST } from "../layers/layer.ts";
import type { WorkingSetLevels } from "../policy/compaction-policy.ts";
import type { CompactRange } from "../summary/compaction-outcome.ts";
import { createSummaryPipeline } from "../summary/summary-pipeline.ts";
import type {
  CompactionPreview,
  ContextEventListener,
  DeclinedCompaction,
  LayerReport,
} from "./context-events.ts";
import type { ContextManagerOptions, PrepareOptions } from "./context-manager-options.ts";
import { type LadderCall, type ManagerCore, runLadder, startCall, type WindowLevels } from "./ladder.ts";
import { observe, prepareCall, recoverCall } from "./manager-calls.ts";
import { changedByCheapLayers, createCore, type SessionState } from "./manager-core.ts";
import { buildContextManagement, supportsNativeContext } from "./native-context.ts";
import type { PinnedItem, PinsStatus } from "./pins.ts";
import { createSessionStats, type SessionStats } from "./session-stats.ts";

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
  /**
   * Turns until the threshold at the recent rate of growth (a resumed session's goes on from its transcript's last
   * responses); undefined until the rate is known, or while the context is not growing.
   */
  turnsUntilCompaction: number | undefined;
  /** Why `turnsUntilCompaction` is undefined, in words (what the rate needs and what is missing); set only then. */
  growthUnknown?: string;
  /**
   * Summaries so far (the summary layer, session notes, reactive and manual ones): the "compactions" of reports.
   * A resumed session's count goes on from its transcript's.
   */
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
   * Called before every model call with the whole conversation (the caller's list, only ever appended to; the
   * caller may drop messages from its start once passed, as long as the last message it passed is still there).
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
  /**
   * Pins a message of the conversation (the same list `prepare` takes), by its id or a tool_use id it holds:
   * no layer clears, folds, snips or summarises it (nor the other halves of its tool calls) while the pins fit
   * `config.pins.maxShare` of the window; the pin is written to the transcript, so a resumed manager keeps it.
   * Rejects with `PinNotFoundError` when the context holds no such message, and with `PinLimitError` when the
   * pins would pass their cap (unpin one first). Pinning a pinned message resolves to its pin.
   */
  pin(messages: readonly Message[], id: string, options?: { by?: string }): Promise<PinnedItem>;
  /** Unpins the pin holding this message or tool_use id; resolves to false when none did. */
  unpin(messages: readonly Message[], id: string): Promise<boolean>;
  /** The pins, oldest first, with their sizes and whether each is honoured now; cheap. */
  pins(): PinsStatus;
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
  /**
   * What the manager has recorded (or resumed), in order, as also written to the transcript sink: everything, or
   * with `retainEntries: "context"` only the entries the current context is projected from (the latest
   * boundary, its summary and preserved messages, what came after; the transcript on disk holds the rest).
   */
  readonly entries: readonly TranscriptEntry[];
  /** Subscribes to events; returns the unsubscribe function. */
  on(listener: ContextEventListener): () => void;
  /**
   * Resolves once the outputs the manager saves in the background (with a `sessionDir`, each output of a tool
   * that is not reproducible, as it arrives) are on disk or have failed: call it before exiting or removing the
   * session folder.
   */
  flush?(): Promise<void>;
}

/**
 * Creates the manager of one session's context. See `ContextManagerOptions` for what it uses; with only a
 * model and limits it works offline (extractive summaries, no provider).
 */
export function createContextManager(options: ContextManagerOptions): ContextManager {
  const window = createWindow(options);
  const core = createCore(options, window);
  const stats = (options.continues && statsOf.get(options.continues)) ?? resumedStats(options, core.layers);
  const pipeline = createSummaryPipeline(core, () => stats.compacted());
  const session: SessionState = {
    pending: new Map(),
    recoveries: 0,
    lastTokens: undefined,
    settled: createSettledTracker(createChangeableMessages(changedByCheapLayers(options, core.retention))),
  };
  const status = (tokens = core.size.tokens()) => statusOf(core, window.policy, stats, tokens);
  const finish = (call: LadderCall) => finishCall(core, call, session, status);

  const manager: ContextManager = {
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
    async pin(messages, id, pinOptions = {}) {
      observe(core, core.view.sync(messages));
      const item = core.pins.pin(id, pinOptions.by);
      await core.view.flush();
      return item;
    },
    async unpin(messages, id) {
      observe(core, core.view.sync(messages));
      const removed = core.pins.unpin(id);
      await core.view.flush();
      return removed;
    },
    pins: () => core.pins.status(),
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
    flush: async () => core.outputs?.flush(),
  };
  statsOf.set(manager, stats);
  return manager;
}

// Each manager's counts, for the manager that takes over from it (`continues`); nothing else reads them.
const statsOf = new WeakMap<ContextManager, SessionStats>();

/** A new manager's counts: zero, or a resumed transcript's (its summary layers' decisions are compactions too). */
function resumedStats(options: ContextManagerOptions, layers: readonly Layer[]): SessionStats {
  if (!options.resume) return createSessionStats();
  const summaryLayers = new Set(layers.flatMap((layer) => (layer.kind === "summary" ? [layer.name] : [])));
  return createSessionStats({ entries: options.resume, summaryLayers });
}

function statusOf(
  core: ManagerCore,
  policy: ContextPolicy,
  stats: SessionStats,
  tokens: number,
): ContextStatus {
  const levels = core.levels();
  const rate = stats.growthRate;
  const growthUnknown = stats.growthUnknown;
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
    ...(growthUnknown === undefined ? {} : { growthUnknown }),
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
