import { randomUUID } from "node:crypto";
import {
  ConfigurationError,
  type ContentBlock,
  getMessageText,
  InvalidMessageError,
  type Tool,
} from "@unforget/core";
import { contextBreakdown } from "../context/context-breakdown.ts";
import type { ConnectedMcp } from "../optional/session-peers.ts";
import type { SessionAuthorization } from "../permissions/session-permissions.ts";
import type { CompactReport, SessionStatus, SessionTurn } from "./agent-session.ts";
import type { AgentSessionOptions } from "./agent-session-options.ts";
import { EventChannel } from "./event-channel.ts";
import { runTurn } from "./run-turn.ts";
import { SessionBusyError, SessionClosedError } from "./session-errors.ts";
import type { SessionEvent } from "./session-events.ts";
import type { SessionRuntime } from "./session-runtime.ts";

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
  runtime.emit = (event) => channel.push(event);
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

/** Compacts now (`AgentSession.compact`), or previews the summary. */
export function compactSession(
  state: SessionState,
  instructions: string | undefined,
  options: { preview?: boolean },
): Promise<CompactReport> {
  return exclusive(state, "compact()", async (signal) => {
    const runtime = state.current;
    await runtime.beginTurn();
    const result = await runtime.manager.compact(runtime.conversation, {
      ...runtime.prepareOptions(signal),
      ...(instructions ? { instructions } : {}),
      ...(options.preview ? { preview: true } : {}),
    });
    runtime.lastPrepared = result;
    return {
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokens,
      actions: result.actions,
      declined: result.declined ?? [],
      ...(result.preview ? { preview: result.preview } : {}),
    };
  });
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
