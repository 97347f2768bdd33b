import { randomUUID } from "node:crypto";
import { CompactionFailedError, PinNotFoundError, type PinnedItem } from "@unforget/compact";
import {
  ConfigurationError,
  type ContentBlock,
  getMessageText,
  InvalidMessageError,
  type Tool,
} from "@unforget/core";
import { projectMessages } from "@unforget/transcript";
import { contextBreakdown } from "../context/context-breakdown.ts";
import type { ConnectedMcp } from "../optional/session-peers.ts";
import type { SessionAuthorization } from "../permissions/session-permissions.ts";
import type { CompactReport, CompactSessionOptions, SessionStatus, SessionTurn } from "./agent-session.ts";
import type { AgentSessionOptions } from "./agent-session-options.ts";
import { EventChannel } from "./event-channel.ts";
import { runTurn } from "./run-turn.ts";
import { SessionBusyError, SessionClosedError } from "./session-errors.ts";
import type { SessionEvent } from "./session-events.ts";
import type { SessionRuntime } from "./session-runtime.ts";
import { trimSessionConversation } from "./trim-conversation.ts";

// What an open session does, as module-level functions over its state: send a turn, compact, report its status,
// change the model, clear and close. `createAgentSession` wires the state and exposes these as `AgentSession`.

/** Opens a runtime for a session id: a new session, a resumed one, or the one a /clear starts. */
export type OpenRuntime = (
  sessionId: string,
  source: "startup" | "resume" | "clear",
  model: string,
) => Promise<SessionRuntime>;

/** One open session: its current runtime (a /clear replaces it), the work running now, and what it was wired with. */
export interface SessionState {
  current: SessionRuntime;
  /** The turn, compaction or clear running now; `interrupt()` aborts it. */
  running: { controller: AbortController; done: Promise<unknown>; exclusive?: string } | undefined;
  /** Prompts sent while a compaction or clear ran, waiting for it (and each for the one before), in order. */
  queue?: { waiting: number; last: Promise<unknown> };
  closed: boolean;
  readonly options: AgentSessionOptions;
  /** The tools of the next model call. */
  readonly tools: () => readonly Tool[];
  readonly authorization: SessionAuthorization;
  readonly mcp: ConnectedMcp | undefined;
  readonly open: OpenRuntime;
}

/** Throws when the session is closed or busy. */
function guard(state: SessionState, operation: string): void {
  if (state.closed) throw new SessionClosedError(operation);
  if (state.running) throw new SessionBusyError(operation);
}

/** Runs work that no turn may overlap (a compaction, a clear); `interrupt()` aborts it. */
async function exclusive<T>(
  state: SessionState,
  operation: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  guard(state, operation);
  const controller = new AbortController();
  const done = work(controller.signal);
  state.running = { controller, done: done.catch(() => undefined), exclusive: operation };
  try {
    return await done;
  } finally {
    state.running = undefined;
  }
}

/** Sends a prompt and runs the turn (`AgentSession.send`). */
export function sendTurn(
  state: SessionState,
  prompt: string | ContentBlock[],
  sendOptions: { signal?: AbortSignal },
): SessionTurn {
  if (state.closed) throw new SessionClosedError("send()");
  if (typeof prompt === "string" ? prompt.trim() === "" : prompt.length === 0) {
    throw new InvalidMessageError(
      "send() needs a prompt, and it was empty (providers refuse empty messages). Pass the user's words, or blocks with content.",
    );
  }
  // Sent while a compaction runs (or behind prompts that were): it goes after it, in order.
  if (state.running?.exclusive !== undefined || (state.queue?.waiting ?? 0) > 0) {
    return queuedTurn(state, prompt, sendOptions);
  }
  return startTurn(state, prompt, sendOptions);
}

/** Starts a turn now: refused while other work runs. */
function startTurn(
  state: SessionState,
  prompt: string | ContentBlock[],
  sendOptions: { signal?: AbortSignal },
): SessionTurn {
  guard(state, "send()");
  const controller = new AbortController();
  const outer = sendOptions.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener("abort", onAbort, { once: true });
  const channel = new EventChannel<SessionEvent>(() => controller.abort());
  const runtime = state.current;
  runtime.emit = (event) => {
    // MCP servers that do not hold the first request up start once it is on its way.
    if (event.type === "model-request") state.mcp?.start?.();
    channel.push(event);
  };
  runtime.turnSpan = startTurnSpan(runtime);
  runtime.emit({
    type: "turn-start",
    sessionId: runtime.sessionId,
    prompt: typeof prompt === "string" ? prompt : getMessageText({ content: prompt }),
  });
  const cleanup = () => {
    outer?.removeEventListener("abort", onAbort);
    runtime.emit = () => {};
    runtime.turnSpan = undefined;
    state.running = undefined;
  };
  // The session is free again before the outcome is visible (result() or the end of the iteration).
  const done = runTurn(runtime, prompt, {
    signal: controller.signal,
    ...(state.options.maxTurns !== undefined ? { maxTurns: state.options.maxTurns } : {}),
  }).then(
    (result) => {
      endTurnSpan(runtime, { stopReason: result.stopReason, turns: result.turns, usage: result.usage });
      cleanup();
      channel.close();
      return result;
    },
    (error: unknown) => {
      endTurnSpan(runtime, { error, isError: true });
      cleanup();
      channel.fail(error);
      throw error;
    },
  );
  state.running = { controller, done: done.catch(() => undefined) };
  // The outcome is read through result() or the iteration; an unread failure is not an unhandled rejection.
  done.catch(() => {});
  return {
    [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator](),
    result: () => {
      channel.discardUnread();
      return done;
    },
  };
}

/**
 * A prompt sent while a compaction or clear runs: its turn starts once that work and the prompts queued before
 * it are done, so it lands after the summary (and its continuation), in the order the prompts were sent.
 */
function queuedTurn(
  state: SessionState,
  prompt: string | ContentBlock[],
  sendOptions: { signal?: AbortSignal },
): SessionTurn {
  const queue = state.queue ?? { waiting: 0, last: Promise.resolve() };
  state.queue = queue;
  queue.waiting++;
  const channel = new EventChannel<SessionEvent>(() => {});
  const before = Promise.all([queue.last, state.running?.done]);
  const done = before.then(async () => {
    queue.waiting--;
    try {
      const turn = startTurn(state, prompt, sendOptions);
      for await (const event of turn) channel.push(event);
      channel.close();
      return await turn.result();
    } catch (error) {
      channel.fail(error);
      throw error;
    }
  });
  queue.last = done.catch(() => undefined);
  done.catch(() => {});
  return {
    [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator](),
    result: () => {
      channel.discardUnread();
      return done;
    },
  };
}

/** Most compactions one `compact(…, { targetTokens })` runs: each summarises the last summary and what came after it. */
const MAX_TARGET_ROUNDS = 3;

/** Compacts now (`AgentSession.compact`), or previews the summary, or compacts until the context is under a target. */
export async function compactSession(
  state: SessionState,
  instructions: string | undefined,
  options: CompactSessionOptions,
): Promise<CompactReport> {
  const target = options.targetTokens;
  if (target !== undefined && (!Number.isSafeInteger(target) || target <= 0)) {
    throw new ConfigurationError(
      `compact()'s targetTokens must be a whole number of tokens above 0 (e.g. 20000); it was ${target}.`,
      { setting: "targetTokens" },
    );
  }
  if (target !== undefined && options.preview) {
    throw new ConfigurationError(
      "compact() with preview writes one summary and applies nothing, so it takes no targetTokens: drop one of them.",
      { setting: "targetTokens" },
    );
  }
  return exclusive(state, "compact()", async (signal) => {
    const runtime = state.current;
    await runtime.beginTurn();
    const once = async (): Promise<CompactReport> => {
      const result = await runtime.manager.compact(runtime.conversation, {
        ...runtime.prepareOptions(signal),
        ...(instructions ? { instructions } : {}),
        ...(options.preview ? { preview: true } : {}),
      });
      runtime.lastPrepared = result;
      trimSessionConversation(runtime);
      return {
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokens,
        actions: result.actions,
        declined: result.declined ?? [],
        ...(result.preview ? { preview: result.preview } : {}),
      };
    };
    return target === undefined ? once() : compactToTarget(runtime.manager.status().tokens, target, once);
  });
}

/**
 * Compacts until the context is at or under `target` tokens: a compaction, then another while the context is
 * still over it and the last one made it smaller (at most three). A compaction never makes the context larger,
 * so this ends at or under where it started. The report sums the rounds; `target` says how it went.
 */
async function compactToTarget(
  tokensBefore: number,
  target: number,
  once: () => Promise<CompactReport>,
): Promise<CompactReport> {
  const report: CompactReport = { tokensBefore, tokensAfter: tokensBefore, actions: [], declined: [] };
  let rounds = 0;
  let reason: string | undefined;
  while (report.tokensAfter > target) {
    if (rounds === MAX_TARGET_ROUNDS) {
      reason = `${MAX_TARGET_ROUNDS} compactions in a row did not get there; what is left is the summary, the recent messages kept verbatim, the pinned ones and what every request carries (system prompt, tools).`;
      break;
    }
    let round: CompactReport;
    try {
      round = await once();
    } catch (error) {
      // Everything left is the verbatim tail (and the pins): that is where it stops, as a reason, not a failure.
      if (!(error instanceof CompactionFailedError && error.reason === "nothing-to-summarize")) throw error;
      reason = error.message;
      break;
    }
    rounds++;
    report.actions.push(...round.actions);
    report.declined.push(...round.declined);
    if (round.actions.length === 0 || round.tokensAfter >= report.tokensAfter) {
      const declined = round.declined.map((entry) => entry.reason).join(" ");
      reason =
        rounds > 1
          ? `Nothing more can be summarised${declined ? ` (${declined.replace(/\.$/, "")})` : ""}: what is left is the summary, the recent messages kept verbatim, the pinned ones and what every request carries (system prompt, tools).`
          : declined ||
            "A compaction would not make it smaller: what is left is the recent messages kept verbatim, the pinned ones and what every request carries (system prompt, tools).";
      report.tokensAfter = Math.min(report.tokensAfter, round.tokensAfter);
      break;
    }
    report.tokensAfter = round.tokensAfter;
  }
  const reached = report.tokensAfter <= target;
  report.target = { tokens: target, reached, rounds, ...(reason && !reached ? { reason } : {}) };
  return report;
}

/** Pins a message of the session's context (`AgentSession.pin`): "last" is its newest message. */
export async function pinMessage(
  state: SessionState,
  id: string,
  by: string | undefined,
): Promise<PinnedItem> {
  guard(state, "pin()");
  const runtime = state.current;
  const conversation = runtime.conversation;
  const target = id === "last" ? conversation.findLast((message) => !message.isMeta)?.id : id;
  if (target === undefined) {
    throw new PinNotFoundError(id, "There is no message to pin yet: send a prompt first.");
  }
  return runtime.manager.pin(conversation, target, by ? { by } : {});
}

/** Unpins (`AgentSession.unpin`): false when no pin held that message or tool_use id. */
export async function unpinMessage(state: SessionState, id: string): Promise<boolean> {
  guard(state, "unpin()");
  const runtime = state.current;
  return runtime.manager.unpin(runtime.conversation, id);
}

/** The gauge and the breakdown (`AgentSession.status`). */
export function sessionStatus(state: SessionState): SessionStatus {
  const runtime = state.current;
  return {
    ...runtime.manager.status(),
    sessionId: runtime.sessionId,
    model: runtime.model,
    providerId: runtime.options.provider.providerId,
    transcriptPath: runtime.transcript.path,
    busy: state.running !== undefined,
    breakdown: contextBreakdown(runtime),
  };
}

/** The summary message the context holds now (`AgentSession.summary`), from the last request or the entries. */
export function currentSummary(runtime: SessionRuntime): string | undefined {
  const messages = runtime.projected ?? projectMessages(runtime.entries);
  const summary = messages.findLast((message) => message.isCompactSummary);
  return summary ? getMessageText(summary) : undefined;
}

/** Changes the model for the next calls (`AgentSession.setModel`). */
export function setSessionModel(state: SessionState, model: string): void {
  guard(state, "setModel()");
  if (model.trim() === "") {
    throw new ConfigurationError("setModel() needs a model id; it was empty.", { setting: "model" });
  }
  state.current.setModel(model);
}

/** Ends the current session and opens a new one with an empty context (`AgentSession.clear`). */
export function clearSession(state: SessionState): Promise<void> {
  return exclusive(state, "clear()", async () => {
    const previous = state.current;
    await previous.close("clear");
    state.current = await state.open(randomUUID(), "clear", previous.model);
  });
}

/** Stops what runs, ends the session and closes the MCP servers it started (`AgentSession.close`). */
export async function closeSession(state: SessionState, reason: string): Promise<void> {
  if (state.closed) return;
  state.running?.controller.abort();
  await state.running?.done;
  state.closed = true;
  try {
    await state.current.close(reason);
  } finally {
    if (state.mcp?.owned) await state.mcp.servers.close();
  }
}

function startTurnSpan(runtime: SessionRuntime) {
  try {
    return runtime.tracer.startSpan({
      kind: "turn",
      sessionId: runtime.sessionId,
      model: runtime.model,
      providerId: runtime.options.provider.providerId,
    });
  } catch {
    return undefined;
  }
}

function endTurnSpan(
  runtime: SessionRuntime,
  outcome: Parameters<NonNullable<SessionRuntime["turnSpan"]>["end"]>[0],
) {
  try {
    runtime.turnSpan?.end(outcome);
  } catch {
    // A tracer that throws must not break the loop.
  }
}
