import type { Message, TextBlock } from "@unforget/core";
import type { ContextEvent } from "../manager/context-events.ts";
import type { ContextManager, ContextStatus, PrepareResult } from "../manager/context-manager.ts";
import type { PrepareOptions } from "../manager/context-manager-options.ts";

/** What a codec is given while it converts: a way to report a shape it does not know (it must still keep it). */
export interface HostCodecContext {
  /** Called for a message or block shape the codec does not model; the conversation reports each shape once. */
  reportUnknownShape(shape: string, detail: string): void;
}

/**
 * How one host library's messages (the AI SDK's, LangChain's) map to Unforget's. One host message is one
 * Unforget message; one Unforget message may need several host messages (a user message holding tool
 * results and text, for a host that keeps tool results in their own messages).
 */
export interface HostCodec<H> {
  /**
   * Called once for each new host message, in order. Returns its Unforget message; the id may be empty (the
   * conversation assigns one) and is replaced when it repeats an earlier message's id.
   */
  decode(message: H, context: HostCodecContext): Message;
  /** Called for each projected message that the ladder created or changed; returns the host messages carrying it. */
  encode(message: Message, context: HostCodecContext): H[];
  /** Called only for two different objects: whether they are the same message (equal ids, or equal content). */
  equal(a: H, b: H): boolean;
  /**
   * Called for the leading host messages: the text of a system prompt, or undefined for a conversation message.
   * The leading run of system messages is sent unchanged before the projection and counted as the system prompt.
   */
  systemText?(message: H): string | undefined;
}

/** What a host conversation reports besides the manager's own events. */
export type HostEvent =
  | {
      type: "unknown-shape";
      /** A short name of the shape ("assistant part source", "message role developer"). */
      shape: string;
      /** One line: what was kept and how. */
      detail: string;
    }
  | {
      type: "conversation-reset";
      /** Messages of the conversation that was left. */
      previousMessages: number;
      reason: string;
    };

export type HostConversationListener = (event: ContextEvent | HostEvent) => void;

export interface HostConversationOptions<H> {
  codec: HostCodec<H>;
  /** Called once, and again when the host rewrote its conversation (a rewind or an edit); see `conversation-reset`. */
  createManager(): ContextManager;
  /** Prefix of the ids given to host messages that have none (default "host"). */
  idPrefix?: string;
  /** Receives every event; more listeners can be added with `on`. */
  onEvent?: HostConversationListener;
  /** Time source (ms) that stamps each new message (hosts keep no times); default `Date.now`, as the manager's. */
  clock?: () => number;
  /**
   * Puts a prompt-cache breakpoint on the last settled host message (`HostPrepared.settled`), so that what the
   * cheap layers fold later leaves the prefix before it cached, as a provider loop's request would have it.
   * Never on the last message (the host's moving breakpoint goes there; when every message is settled it goes on
   * the one before), never on one that carries a
   * breakpoint already, and only while the messages carry at most one breakpoint of the host's own: with the
   * tools' and the system prompt's that keeps a request within the four a request may carry.
   */
  settledBreakpoint?: HostBreakpoints<H>;
}

/** How a host's messages carry prompt-cache breakpoints. */
export interface HostBreakpoints<H> {
  /** Called once per message object: how many breakpoints it carries. */
  count(message: H): number;
  /** Called once per message object: a copy with a breakpoint on its last block, or undefined when none fits there. */
  mark(message: H): H | undefined;
}

/** Breakpoints of the host's own a request may carry besides the settled one (tools and system are the others). */
const HOST_MESSAGE_BREAKPOINTS = 1;

export interface HostPrepared<H> {
  /** What to send: the leading system messages, then the projection in host messages. */
  messages: H[];
  /** False when `messages` is the host's own list, element for element (nothing to change). */
  changed: boolean;
  /**
   * Host messages at the start of `messages` (the leading system messages included) that no cheap layer will
   * change before the next summary (`PrepareResult.settledMessages`): where the settled breakpoint goes.
   */
  settled: number;
  result: PrepareResult;
}

/**
 * A host library's message list kept in step with a `ContextManager`. The host hands over its whole list on
 * every call: either the conversation it keeps (all messages, only ever appended to) or, after it adopted what
 * the previous call returned, that projection followed by new messages. Both are recognised; only the new tail
 * is converted and given to the manager, which sees one append-only conversation. Untouched messages go back as
 * the host's own objects; only what the ladder created or changed is converted back (once, then reused).
 */
export interface HostConversation<H> {
  /**
   * Called with the host's list before each model call. Converts the messages that are new since the previous
   * call and returns them (Unforget messages, not yet recorded: the caller may still set `usage` on them).
   * A list that is neither an extension of the conversation nor of the last projection starts a new manager.
   */
  append(messages: readonly H[]): Message[];
  /** Runs the ladder on the conversation and resolves to what to send. Call `append` first. */
  prepare(options?: PrepareOptions): Promise<HostPrepared<H>>;
  /** After a prompt-too-long error: reactive compaction, then what to send instead (rejects as `ContextManager.recover`). */
  recover(error: unknown, options?: PrepareOptions): Promise<HostPrepared<H>>;
  /** The manager of the current conversation (a new one after a reset). */
  readonly manager: ContextManager;
  /** The whole conversation as the manager received it, in Unforget messages. */
  readonly messages: readonly Message[];
  /** The manager's current status (cheap). */
  status(): ContextStatus;
  /** Subscribes to the manager's events and the conversation's own; returns the unsubscribe function. */
  on(listener: HostConversationListener): () => void;
  /**
   * Waits for the tool outputs still being saved to the session folder (they are written after the step that saw
   * them, off its path), this manager's and those of any manager a reset replaced: call it before removing the
   * folder or ending the process.
   */
  flush(): Promise<void>;
}

/** How many of the last returned lists a host may continue from (a prepared one, then a recovered one). */
const RECENT_OUTPUTS = 3;

/** What a host conversation holds between calls: the manager, the conversation so far and what it returned. */
interface HostState<H> {
  readonly options: HostConversationOptions<H>;
  readonly codec: HostCodec<H>;
  /** Prefix of the ids given to host messages that have none. */
  readonly prefix: string;
  readonly clock: () => number;
  readonly listeners: Set<HostConversationListener>;
  readonly context: HostCodecContext;
  manager: ContextManager;
  /** Managers a reset replaced whose saves may still be running, until the next flush. */
  replaced: ContextManager[];
  unsubscribe: () => void;
  /** The last number given to an id of `prefix`. */
  counter: number;
  /** The conversation: Unforget messages, and the host message each came from. */
  history: Message[];
  hostHistory: H[];
  decoded: Map<string, Message>;
  origin: Map<string, H>;
  /** What the last calls returned: a host may adopt any recent one (a prepared list, then a recovered one). */
  outputs: H[][];
  /** The leading system messages of the last list, and their text. */
  system: H[];
  systemText: string;
  /** When the manager was last asked (the model call followed): what an answer seen only later is stamped with. */
  lastCall: number | undefined;
  /** The host's list of the last `append`. */
  input: readonly H[];
  /** Each projected message the ladder made, converted once. */
  readonly encoded: WeakMap<Message, H[]>;
  /** How many breakpoints each host message object carries, and its copy with the settled one. */
  readonly counted: WeakMap<object, number>;
  readonly marked: WeakMap<object, H | null>;
}

/** Sends an event to every listener; a broken listener must not break the host's loop. */
function emit(listeners: ReadonlySet<HostConversationListener>, event: ContextEvent | HostEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A broken listener must not break the host's loop.
    }
  }
}

/** The codec's context: each unknown shape reported once, as an event (and on stderr when nobody listens). */
function createCodecContext(listeners: ReadonlySet<HostConversationListener>): HostCodecContext {
  const reported = new Set<string>();
  return {
    reportUnknownShape(shape, detail) {
      if (reported.has(shape)) return;
      reported.add(shape);
      // Nobody listening must still not mean silence: a shape kept blind is worth one line on stderr.
      if (listeners.size === 0) console.warn(`Unforget: ${detail}`);
      emit(listeners, { type: "unknown-shape", shape, detail });
    },
  };
}

/** Starts over with a new manager and an empty conversation. */
function startConversation<H>(state: HostState<H>): void {
  state.unsubscribe();
  if (state.manager.flush) state.replaced.push(state.manager);
  state.manager = state.options.createManager();
  state.unsubscribe = state.manager.on((event) => emit(state.listeners, event));
  state.history = [];
  state.hostHistory = [];
  state.decoded = new Map();
  state.origin = new Map();
  state.outputs = [];
  state.lastCall = undefined;
}

function sameHostMessage<H>(codec: HostCodec<H>, a: H, b: H): boolean {
  return a === b || codec.equal(a, b);
}

/** The tail of `body` after `base`, when `body` continues it (same first and last message at the same places). */
function tailAfter<H>(codec: HostCodec<H>, body: readonly H[], base: readonly H[]): readonly H[] | undefined {
  const length = base.length;
  if (length === 0 || body.length < length) return undefined;
  if (
    !sameHostMessage(codec, body[length - 1]!, base[length - 1]!) ||
    !sameHostMessage(codec, body[0]!, base[0]!)
  ) {
    return undefined;
  }
  return body.slice(length);
}

/** `candidate`, or a new id of the prefix when it is empty or repeats an earlier message's id. */
function freshId<H>(state: HostState<H>, candidate: string): string {
  if (candidate.length > 0 && !state.decoded.has(candidate)) return candidate;
  let id: string;
  do id = `${state.prefix}_${++state.counter}`;
  while (state.decoded.has(id));
  return id;
}

/** The projection in host messages, and how many of them (system first) the first `settled` messages made. */
function encodeProjection<H>(
  state: HostState<H>,
  projected: readonly Message[],
  settled: number,
): { out: H[]; settledHosts: number } {
  const out: H[] = [...state.system];
  let settledHosts = settled > 0 ? out.length : 0;
  projected.forEach((message, index) => {
    if (state.decoded.get(message.id) === message) out.push(state.origin.get(message.id)!);
    else {
      let hosts = state.encoded.get(message);
      if (!hosts) {
        hosts = state.codec.encode(message, state.context);
        state.encoded.set(message, hosts);
      }
      out.push(...hosts);
    }
    if (index < settled) settledHosts = out.length;
  });
  return { out, settledHosts };
}

/** How many breakpoints a host message carries (counted once per object). */
function breakpointCount<H>(state: HostState<H>, message: H): number {
  const breakpoints = state.options.settledBreakpoint;
  if (!breakpoints || typeof message !== "object" || message === null) return 0;
  let count = state.counted.get(message);
  if (count === undefined) {
    count = breakpoints.count(message);
    state.counted.set(message, count);
  }
  return count;
}

/**
 * `messages` with the settled breakpoint on message `settled - 1`, when it may carry one (see the option). When
 * every message is settled (no cheap layer may change any: the tools' results are kept, whatever the tools are
 * called), it goes on the one before the last: what is before a settled message is settled too.
 */
function markSettled<H>(state: HostState<H>, messages: H[], settled: number): void {
  const breakpoints = state.options.settledBreakpoint;
  const index = Math.min(settled, messages.length - 1) - 1;
  if (!breakpoints || index < state.system.length || index >= messages.length - 1) return;
  const target = messages[index]!;
  if (typeof target !== "object" || target === null || breakpointCount(state, target) > 0) return;
  let own = 0;
  for (const message of messages) own += breakpointCount(state, message);
  if (own > HOST_MESSAGE_BREAKPOINTS) return;
  let copy = state.marked.get(target);
  if (copy === undefined) {
    copy = breakpoints.mark(target) ?? null;
    state.marked.set(target, copy);
    if (copy !== null && typeof copy === "object") state.counted.set(copy as object, 0);
  }
  if (copy !== null) messages[index] = copy;
}

/** What to send for a manager's result, remembered as a list the host may continue from. */
function finishPrepared<H>(state: HostState<H>, result: PrepareResult): HostPrepared<H> {
  const { out: messages, settledHosts } = encodeProjection(
    state,
    result.projected,
    result.settledMessages ?? 0,
  );
  markSettled(state, messages, settledHosts);
  state.outputs = [messages.slice(state.system.length), ...state.outputs.slice(0, RECENT_OUTPUTS - 1)];
  const input = state.input;
  const changed =
    messages.length !== input.length || messages.some((message, index) => message !== input[index]);
  return { messages, changed, settled: settledHosts, result };
}

/** The prepare options with the host's system messages' text before the caller's system prompt. */
function withSystem<H>(state: HostState<H>, prepareOptions: PrepareOptions): PrepareOptions {
  const systemText = state.systemText;
  if (systemText.length === 0) return prepareOptions;
  const given = prepareOptions.system;
  const merged: string | TextBlock[] =
    given === undefined
      ? systemText
      : typeof given === "string"
        ? `${systemText}\n\n${given}`
        : [{ type: "text", text: systemText }, ...given];
  return { ...prepareOptions, system: merged };
}

/** Takes the leading system messages of the host's list into the state; returns the rest. */
function takeSystem<H>(state: HostState<H>, messages: readonly H[]): readonly H[] {
  let leading = 0;
  const texts: string[] = [];
  while (leading < messages.length) {
    const text = state.codec.systemText?.(messages[leading]!);
    if (text === undefined) break;
    texts.push(text);
    leading++;
  }
  state.system = messages.slice(0, leading);
  state.systemText = texts.join("\n\n");
  return leading === 0 ? messages : messages.slice(leading);
}

/**
 * The messages of `body` that are new: after the conversation or a recent projection it continues, or all of
 * them (with a new manager, reported as a reset) when it continues neither.
 */
function newTail<H>(state: HostState<H>, body: readonly H[]): readonly H[] {
  if (state.history.length === 0) return body;
  // The longest base the list continues wins: an older, shorter projection would re-append messages.
  let found: readonly H[] | undefined;
  for (const base of [...state.outputs, state.hostHistory]) {
    const tail = tailAfter(state.codec, body, base);
    if (tail !== undefined && (found === undefined || tail.length < found.length)) found = tail;
  }
  if (found !== undefined) return found;
  const previous = state.history.length;
  startConversation(state);
  emit(state.listeners, {
    type: "conversation-reset",
    previousMessages: previous,
    reason:
      "the host's messages neither extend the conversation nor the last projection (a rewind or an edit); a new context manager took the list as a new conversation",
  });
  return body;
}

/** Converts the new host messages and adds them to the conversation. */
function appendHostMessages<H>(state: HostState<H>, messages: readonly H[]): Message[] {
  state.input = messages;
  const tail = newTail(state, takeSystem(state, messages));
  const added: Message[] = [];
  const now = state.clock();
  for (const host of tail) {
    const message = state.codec.decode(host, state.context);
    message.id = freshId(state, message.id);
    message.timestamp = new Date(now).toISOString();
    state.decoded.set(message.id, message);
    state.origin.set(message.id, host);
    state.history.push(message);
    state.hostHistory.push(host);
    added.push(message);
  }
  // Hosts keep no times. A response was written by the previous call, not now: stamped so, the time the
  // tools or the user took shows as the idle gap it was (the prompt cache may have expired, which the
  // ladder uses).
  if (state.lastCall !== undefined) {
    const stamp = new Date(state.lastCall).toISOString();
    for (const message of added) if (message.role === "assistant") message.timestamp = stamp;
  }
  return added;
}

export function createHostConversation<H>(options: HostConversationOptions<H>): HostConversation<H> {
  const listeners = new Set<HostConversationListener>();
  if (options.onEvent) listeners.add(options.onEvent);
  const manager = options.createManager();
  const state: HostState<H> = {
    options,
    codec: options.codec,
    prefix: options.idPrefix ?? "host",
    clock: options.clock ?? Date.now,
    listeners,
    context: createCodecContext(listeners),
    manager,
    replaced: [],
    unsubscribe: manager.on((event) => emit(listeners, event)),
    counter: 0,
    history: [],
    hostHistory: [],
    decoded: new Map(),
    origin: new Map(),
    outputs: [],
    system: [],
    systemText: "",
    lastCall: undefined,
    input: [],
    encoded: new WeakMap(),
    counted: new WeakMap(),
    marked: new WeakMap(),
  };
  return {
    append: (messages) => appendHostMessages(state, messages),
    async prepare(prepareOptions = {}) {
      state.lastCall = state.clock();
      return finishPrepared(
        state,
        await state.manager.prepare(state.history, withSystem(state, prepareOptions)),
      );
    },
    async recover(error, prepareOptions = {}) {
      state.lastCall = state.clock();
      return finishPrepared(state, await state.manager.recover(error, withSystem(state, prepareOptions)));
    },
    get manager() {
      return state.manager;
    },
    get messages() {
      return state.history;
    },
    status: () => state.manager.status(),
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async flush() {
      const managers = [...state.replaced.splice(0), state.manager];
      await Promise.all(managers.map((manager) => manager.flush?.()));
    },
  };
}
