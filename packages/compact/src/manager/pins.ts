import { ConfigurationError, type Message } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";
import { PinLimitError, PinNotFoundError } from "../compact-error.ts";
import { estimateTokens } from "../conversation/conversation.ts";
import { NO_PINS, type PinnedSet, pinClosure, resolvePinTarget } from "../conversation/pinned.ts";
import { PIN_MAX_SHARE } from "../defaults.ts";
import type { ContextEvents } from "./context-events.ts";
import type { ContextView } from "./context-view.ts";

/** One pin: the message it was asked for, the tool partners kept with it, and whether it is honoured now. */
export interface PinnedItem {
  /** The pinned message's id (a tool_use id given to `pin` names the message that made the call). */
  messageId: string;
  /** Every message kept with it: itself and the other halves of the tool calls it holds. */
  messageIds: string[];
  /** Estimated tokens of those messages as they stand in the context now. */
  tokens: number;
  /** False while the window is too small for it and the newer pins (it is then compacted like any message). */
  honoured: boolean;
  /** Who pinned it ("user", a plugin's name, …), when it was said. */
  by?: string;
}

/** The pins of a session (`ContextManager.pins()`). */
export interface PinsStatus {
  /** Oldest first. */
  items: PinnedItem[];
  /** Estimated tokens of the honoured pins. */
  tokens: number;
  /** The most pinned messages may take: `maxShare` of the context window. */
  capTokens: number;
  maxShare: number;
}

interface Pin {
  messageId: string;
  by?: string;
}

/** The manager's pins: asked for by `pin`, persisted as `pin` entries, honoured newest first within the cap. */
export interface Pins {
  pin(id: string, by?: string): PinnedItem;
  unpin(id: string): boolean;
  status(): PinsStatus;
  /** The honoured pins over the current view; a pin that stops being honoured is reported once (`pins-unhonoured`). */
  honoured(): PinnedSet;
  /** Pins what PreCompact plugins asked for; one that cannot be made is reported (`pin-refused`), never thrown. */
  pinForPlugins(ids: readonly string[]): void;
}

interface PinState {
  readonly view: ContextView;
  readonly events: ContextEvents;
  readonly contextWindow: () => number;
  readonly maxShare: number;
  pins: Pin[];
  /** Pins reported as not honoured, until they are honoured again or unpinned. */
  readonly unhonoured: Set<string>;
}

/** The pins of one manager, replayed from the `pin` entries of `resume` (the last entry for a message wins). */
export function createPins(
  view: ContextView,
  events: ContextEvents,
  contextWindow: () => number,
  maxShare = PIN_MAX_SHARE,
  resume: readonly TranscriptEntry[] = [],
): Pins {
  if (!(maxShare > 0 && maxShare <= 1)) {
    throw new ConfigurationError(
      `config.pins.maxShare must be a share of the window above 0 and at most 1 (e.g. 0.25); it was ${maxShare}.`,
      { setting: "pins.maxShare" },
    );
  }
  const state: PinState = { view, events, contextWindow, maxShare, pins: [], unhonoured: new Set() };
  for (const entry of resume) {
    if (entry.type !== "pin") continue;
    const ids = new Set(entry.messageIds);
    state.pins = state.pins.filter((pin) => !ids.has(pin.messageId));
    if (entry.pinned) {
      for (const messageId of entry.messageIds)
        state.pins.push({ messageId, ...(entry.by ? { by: entry.by } : {}) });
    }
  }
  return {
    pin: (id, by) => pin(state, id, by),
    unpin: (id) => unpin(state, id),
    status() {
      const { items, total } = evaluate(state, view.view);
      return { items, tokens: total, capTokens: cap(state), maxShare };
    },
    honoured: () => honoured(state),
    pinForPlugins(ids) {
      for (const id of ids) {
        try {
          pin(state, id, "plugin");
        } catch (error) {
          if (!(error instanceof PinLimitError || error instanceof PinNotFoundError)) throw error;
          events.emit({ type: "pin-refused", id, by: "plugin", reason: error.message });
        }
      }
    },
  };
}

function cap(state: PinState): number {
  return Math.floor(state.contextWindow() * state.maxShare);
}

/** Each pin, newest first, honoured while the pins after it and itself fit under the cap. */
function evaluate(state: PinState, messages: readonly Message[]): { items: PinnedItem[]; total: number } {
  const counted = new Set<string>();
  let total = 0;
  const items: PinnedItem[] = [];
  for (const pinned of [...state.pins].reverse()) {
    const closure = pinClosure(messages, [pinned.messageId]);
    const held = messages.filter((message) => closure.messageIds.has(message.id));
    const fresh = held.filter((message) => !counted.has(message.id));
    const added = estimateTokens(fresh);
    const honoured = held.length > 0 && total + added <= cap(state);
    if (honoured) {
      total += added;
      for (const message of fresh) counted.add(message.id);
    }
    items.unshift({
      messageId: pinned.messageId,
      messageIds: held.map((message) => message.id),
      tokens: estimateTokens(held),
      honoured,
      ...(pinned.by ? { by: pinned.by } : {}),
    });
  }
  return { items, total };
}

function pin(state: PinState, id: string, by: string | undefined): PinnedItem {
  const messages = state.view.view;
  const target = resolvePinTarget(messages, id);
  if (!target) {
    throw new PinNotFoundError(
      id,
      `Nothing in the context has the id ${JSON.stringify(id)}: pin a message id or a tool_use id of a message the context still holds (one already summarised is found with history_search, and stays in the transcript).`,
    );
  }
  const current = evaluate(state, messages);
  const existing = current.items.find((item) => item.messageIds.includes(target.id));
  if (existing?.honoured) return existing;
  const closure = pinClosure(messages, [target.id]);
  const honouredIds = new Set(current.items.flatMap((item) => (item.honoured ? item.messageIds : [])));
  const added = estimateTokens(
    messages.filter((message) => closure.messageIds.has(message.id) && !honouredIds.has(message.id)),
  );
  const limit = cap(state);
  if (current.total + added > limit) {
    throw new PinLimitError(
      current.total,
      added,
      limit,
      `Pinning ${target.id} would take the pinned messages to ${current.total + added} tokens, over their cap of ${limit} (${Math.round(state.maxShare * 100)}% of the ${state.contextWindow()}-token window): unpin a message first (pins() lists them with their sizes), or pin a smaller one.`,
    );
  }
  if (!existing) {
    state.pins.push({ messageId: target.id, ...(by ? { by } : {}) });
    state.view.appendPin([target.id], true, by);
  }
  const wanted = existing?.messageId ?? target.id;
  return evaluate(state, state.view.view).items.find((item) => item.messageId === wanted)!;
}

function unpin(state: PinState, id: string): boolean {
  const target = resolvePinTarget(state.view.view, id);
  const messageId = target?.id ?? id;
  const matching = evaluate(state, state.view.view).items.filter(
    (item) => item.messageId === id || item.messageIds.includes(messageId),
  );
  if (matching.length === 0) return false;
  const ids = new Set(matching.map((item) => item.messageId));
  state.pins = state.pins.filter((pinned) => !ids.has(pinned.messageId));
  for (const removed of ids) state.unhonoured.delete(removed);
  state.view.appendPin([...ids], false, undefined);
  return true;
}

/** The honoured pins' closure over the view; reports each pin that has just stopped being honoured, once. */
function honoured(state: PinState): PinnedSet {
  if (state.pins.length === 0) return NO_PINS;
  const { items } = evaluate(state, state.view.view);
  for (const item of items) {
    if (item.honoured || item.messageIds.length === 0) {
      state.unhonoured.delete(item.messageId);
      continue;
    }
    if (state.unhonoured.has(item.messageId)) continue;
    state.unhonoured.add(item.messageId);
    state.events.emit({
      type: "pins-unhonoured",
      messageIds: item.messageIds,
      tokens: item.tokens,
      capTokens: cap(state),
    });
  }
  return pinClosure(
    state.view.view,
    items.filter((item) => item.honoured).map((item) => item.messageId),
  );
}
