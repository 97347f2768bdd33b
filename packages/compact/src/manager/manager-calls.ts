import { type Message, PromptTooLongError } from "@unforget/core";
import { DEFAULT_PADDING } from "@unforget/tokens";
import { CompactionDisabledError, ContextOverflowError } from "../compact-error.ts";
import { estimateTokens, isUserAuthored } from "../conversation/conversation.ts";
import { MAX_RECOVERIES_PER_TURN, REACTIVE_DRAIN_MARGIN } from "../defaults.ts";
import type { Layer, LayerRequest, SummaryLayer } from "../layers/layer.ts";
import type { SummaryPipeline } from "../summary/summary-pipeline.ts";
import type { LayerReport } from "./context-events.ts";
import type { PrepareOptions } from "./context-manager-options.ts";
import { contextFor, type LadderCall, type ManagerCore, requestFor, runLadder, startCall } from "./ladder.ts";
import type { SessionState } from "./manager-core.ts";
import type { createSessionStats } from "./session-stats.ts";

/** New responses: their usage re-anchors the count, calibrates the estimate and shows unexpected cache breaks. */
export function observe(core: ManagerCore, added: readonly Message[]): void {
  core.size.observe(added);
  for (const message of added) {
    if (message.role !== "assistant" || !message.usage) continue;
    const broke = core.cacheBreaks.observe(message.usage);
    if (broke) core.events.emit({ type: "cache-break", ...broke });
  }
}

export async function prepareCall(
  core: ManagerCore,
  pipeline: SummaryPipeline,
  stats: ReturnType<typeof createSessionStats>,
  session: SessionState,
  messages: readonly Message[],
  options: PrepareOptions,
): Promise<LadderCall> {
  const added = core.view.sync(messages);
  core.outputs?.arrived(added);
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
export async function recoverCall(
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
