import {
  type ContextManager,
  createContextManager,
  createExtractiveSummarizer,
  type Layer,
  type LayerReport,
  type ReplayCall,
  type ReplayStats,
  replayConversation,
  type Summarizer,
} from "@unforget/compact";
import { type Message, modelRetirement, type ToolDefinition } from "@unforget/core";
import {
  ANTHROPIC_DEFAULT_MODEL,
  convertToAnthropicRequest,
  type WireObject,
} from "@unforget/provider-anthropic";
import { getModelPricing, type ResolvedModelPricing } from "@unforget/tokens";
import type { LoadedSession } from "../load-session.ts";
import { formatWindow, MIN_WINDOW } from "../parse-window.ts";
import { inferToolDefinitions } from "../session-tools.ts";

/** The window a replay uses when none is given: the standard Claude window, where Claude Code compacts. */
export const DEFAULT_WINDOW = 200_000;
/** The request's output limit: a quarter of the window at most, as in a live loop that leaves room to answer. */
export const MAX_OUTPUT_TOKENS = 32_000;
/** The system prompt of the requests when the session did not record one. */
export const STAND_IN_SYSTEM =
  "You are a software engineering agent. (The recorded session did not keep its system prompt; this line stands in for it.)";

export interface ReplaySessionOptions {
  /** The context window of the replay, in tokens. */
  window: number;
  /** Writes the summaries; default the extractive summariser (offline, deterministic). */
  summarizer?: Summarizer;
  /** How long the prompt cache lives: "5m" (default) or "1h" (cache writes then cost 2× input). */
  cacheTtl?: "5m" | "1h";
  /** The model that writes the summaries, when not the session's: the summaries are billed at its prices. */
  summarizerModel?: string;
  /** Called after each replayed call with its position; `done` counts from 1 to `total`. */
  onCall?: (call: ReplayCall, done: number, total: number) => void | Promise<void>;
}

/** A layer of the replayed ladder as tables and reports show it. */
export interface LayerInfo {
  name: string;
  label: string;
  color: string;
  /** "summary" for the layers that write a summary (the compactions); "edit" for the cheap ones. */
  kind: Layer["kind"];
  /** True when it acts only when asked by name (the snip tool): not "needed" by the context's size, ever. */
  onRequestOnly: boolean;
}

/** One thing the ladder did, placed at the call it happened before, with a sentence for people. */
export interface LayerAction {
  call: number;
  /** The layer's name; its label and colour are in `SessionReplay.layers`. */
  layer: string;
  trigger: string;
  tokensBefore: number;
  tokensAfter: number;
  tokensFreed: number;
  /** What the layer did, in one sentence. */
  description: string;
  /** For summaries: the start of the summary that replaced the older messages. */
  summaryExcerpt?: string;
}

/** What every request of a replay shares: everything but the messages. */
export interface RequestShape {
  /**
   * The model named in the requests: the session's when it is a current Claude model, the model to use
   * instead when it is deprecated, else the Anthropic provider's default.
   */
  model: string;
  /** Set when the session's model is deprecated: one line saying which model the requests name instead. */
  modelNote?: string;
  /** The requests' `max_tokens`. */
  maxTokens: number;
  /** The recorded system prompt, or a line standing in for it. */
  system: string;
  /** The session's tools, rebuilt from its calls. */
  tools: ToolDefinition[];
}

/** The shared part of a session's requests at a window. */
export function requestShape(session: LoadedSession, window: number): RequestShape {
  const shape: RequestShape = {
    model: session.model?.startsWith("claude") ? session.model : ANTHROPIC_DEFAULT_MODEL,
    maxTokens: Math.min(MAX_OUTPUT_TOKENS, Math.floor(window / 4)),
    system: session.system ?? STAND_IN_SYSTEM,
    tools: inferToolDefinitions(session.messages),
  };
  // A replayed request may be sent to a live API (a dump, a model summariser): never name a retired model.
  const retirement = modelRetirement(shape.model);
  if (retirement !== undefined) {
    shape.modelNote = `The session used ${shape.model}, which is deprecated (end of life ${retirement.retiresOn}): the requests name ${retirement.replacement}.`;
    shape.model = retirement.replacement;
  }
  return shape;
}

export interface SessionReplay extends RequestShape {
  session: LoadedSession;
  window: number;
  stats: ReplayStats;
  calls: ReplayCall[];
  /** The ladder that was replayed, in order. */
  layers: LayerInfo[];
  /** Everything the layers did, in order; the summaries among them are the compactions. */
  actions: LayerAction[];
  /** The summariser that wrote the summaries ("extractive" or "model"). */
  summarizer: string;
  /** The prices the requests were billed at (the requests' model's, or the Sonnet tier's for a model not in the table). */
  pricing: ResolvedModelPricing;
  /** The prices the summaries were billed at (the summariser model's; `pricing` when it is the session's). */
  summaryPricing: ResolvedModelPricing;
  /** The prompt cache's lifetime. */
  cacheTtl: "5m" | "1h";
}

/**
 * Replays a loaded session through a fresh ContextManager at the given window, call by call, with the
 * recorded times as its clock and counter ids, so the same session always gives the same result.
 */
export async function replaySession(
  session: LoadedSession,
  options: ReplaySessionOptions,
): Promise<SessionReplay> {
  const window = options.window;
  const shape = requestShape(session, window);
  const { model, maxTokens, system, tools } = shape;
  const summarizer = options.summarizer ?? createExtractiveSummarizer();
  const pricing = getModelPricing(model);
  const summaryPricing =
    options.summarizerModel === undefined ? pricing : getModelPricing(options.summarizerModel);
  const cacheTtl = options.cacheTtl ?? "5m";
  const total = countModelCalls(session.messages);
  let manager: ContextManager | undefined;
  let seenEntries = 0;
  let counter = 0;
  const actions: LayerAction[] = [];
  const { stats, calls } = await replayConversation(session.messages, {
    window,
    system,
    tools,
    pricing,
    summaryPricing,
    cache: { ttl: cacheTtl },
    createManager: (clock) => {
      manager = createContextManager({
        model,
        limits: { contextWindow: window, maxOutputTokens: maxTokens },
        summarizer,
        clock,
        idFactory: (kind) => `${kind}_${String(++counter).padStart(6, "0")}`,
        pricing,
        config: { cacheTtl },
      });
      return manager;
    },
    onCall: async (call) => {
      const entries = manager?.entries ?? [];
      const summaries = entries
        .slice(seenEntries)
        .flatMap((entry) => (entry.type === "summary" && entry.kind === "compact" ? [entry.text] : []));
      seenEntries = entries.length;
      const layers = new Map((manager?.layers ?? []).map((layer) => [layer.name, layer]));
      for (const action of call.actions) {
        const layer = layers.get(action.layer);
        const summary = layer?.kind === "summary" ? summaries.shift() : undefined;
        actions.push(actionFor(call.index, action, layer, summary));
      }
      await options.onCall?.(call, call.index, Math.max(total, call.index));
    },
  });
  return {
    ...shape,
    session,
    window,
    stats,
    calls,
    layers: (manager?.layers ?? []).map(({ name, label, color, kind, onRequestOnly }) => ({
      name,
      label,
      color,
      kind,
      onRequestOnly: onRequestOnly === true,
    })),
    actions,
    summarizer: summarizer.name,
    pricing,
    summaryPricing,
    cacheTtl,
  };
}

/**
 * The exact Messages API body of one replayed call: what the Anthropic provider would send, with the cache
 * breakpoints the replay billed it by (system and tools, the settled prefix, the last message).
 */
export function requestBody(shape: RequestShape, call: Pick<ReplayCall, "request">): WireObject {
  const { system, tools, messages } = call.request;
  return convertToAnthropicRequest({
    model: shape.model,
    maxTokens: shape.maxTokens,
    messages,
    ...(system !== undefined ? { system } : {}),
    ...(tools && tools.length > 0 ? { tools } : {}),
  }).body;
}

/** Model calls of a recorded conversation: each assistant response after the first message (split responses count once). */
export function countModelCalls(messages: readonly Message[]): number {
  const responses = new Set<string>();
  let calls = 0;
  messages.forEach((message, index) => {
    if (message.role !== "assistant" || index === 0) return;
    if (message.responseId !== undefined) {
      if (responses.has(message.responseId)) return;
      responses.add(message.responseId);
    }
    calls++;
  });
  return calls;
}

function actionFor(
  call: number,
  action: LayerReport,
  layer: Layer | undefined,
  summary: string | undefined,
): LayerAction {
  const note: LayerAction = {
    call,
    layer: action.layer,
    trigger: action.trigger,
    tokensBefore: action.tokensBefore,
    tokensAfter: action.tokensAfter,
    tokensFreed: action.tokensFreed,
    description: layer ? layer.describe(action) : `${action.layer}: ${action.reason}.`,
  };
  if (summary !== undefined) note.summaryExcerpt = excerpt(summary);
  return note;
}

/** Summaries in a replay: the actions of its summary layers (what `status().compactions` counts). */
export function countCompactions(replay: Pick<SessionReplay, "layers" | "actions">): number {
  const summaries = new Set(
    replay.layers.filter((layer) => layer.kind === "summary").map((layer) => layer.name),
  );
  return replay.actions.filter((action) => summaries.has(action.layer)).length;
}

/** The start of a summary's body: its preamble and headings left out, white space folded. */
function excerpt(summary: string): string {
  const body = summary.indexOf("Primary Request and Intent");
  const flat = (body >= 0 ? summary.slice(body + "Primary Request and Intent".length) : summary)
    .replace(/<\/?summary>/g, "")
    .replace(/^\s*#{1,6}\s*/gm, "")
    .replace(/\*\*/g, "")
    .replace(/\s+/g, " ")
    .replace(/^[\s:*]+/, "")
    .trim();
  return flat.length > 400 ? `${flat.slice(0, 399)}…` : flat;
}

/**
 * Why nothing was compacted, and the window that would show the ladder at work: one below the session's peak
 * (three fifths of it, in whole thousands), when a replay may take such a window.
 */
export function windowAdvice(replay: Pick<SessionReplay, "stats">): string {
  const { peakTokens, window } = replay.stats;
  const smaller = Math.floor((peakTokens * 0.6) / 1000) * 1000;
  const fits = `the whole session fits the ${formatWindow(window)} window (its largest request is ${peakTokens.toLocaleString("en-US")} tokens)`;
  return smaller >= MIN_WINDOW && smaller < window
    ? `${fits}. Try --window ${formatWindow(smaller)} to see the ladder at work.`
    : `${fits}, and no window a replay takes (${formatWindow(MIN_WINDOW)} at least) is small enough to make it act.`;
}
