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
  let pins: Pin[] = [];
  for (const entry of resume) {
    if (entry.type !== "pin") continue;
    const ids = new Set(entry.messageIds);
    pins = pins.filter((pin) => !ids.has(pin.messageId));
    if (entry.pinned) {
      for (const messageId of entry.messageIds)
        pins.push({ messageId, ...(entry.by ? { by: entry.by } : {}) });
    }
  }
  const unhonoured = new Set<string>();
  const cap = () => Math.floor(contextWindow() * maxShare);

  /** Each pin, newest first, honoured while the pins before it and itself fit under the cap. */
  const evaluate = (messages: readonly Message[]) => {
    const counted = new Set<string>();
    let total = 0;
    const items: PinnedItem[] = [];
    for (const pin of [...pins].reverse()) {
      const closure = pinClosure(messages, [pin.messageId]);
      const fresh = messages.filter(
        (message) => closure.messageIds.has(message.id) && !counted.has(message.id),
      );
      const added = estimateTokens(fresh);
      const honoured = closure.messageIds.size > 0 && total + added <= cap();
      if (honoured) {
        total += added;
        for (const message of fresh) counted.add(message.id);
      }
      items.unshift({
        messageId: pin.messageId,
        messageIds: messages.filter((message) => closure.messageIds.has(message.id)).map((m) => m.id),
        tokens: estimateTokens(messages.filter((message) => closure.messageIds.has(message.id))),
        honoured,
        ...(pin.by ? { by: pin.by } : {}),
      });
    }
    return { items, total };
  };

  return {
    pin(id, by) {
      const messages = view.view;
      const target = resolvePinTarget(messages, id);
      if (!target) {
        throw new PinNotFoundError(
          id,
          `Nothing in the context has the id ${JSON.stringify(id)}: pin a message id or a tool_use id of a message the context still holds (one already summarised is found with history_search, and stays in the transcript).`,
        );
      }
      const current = evaluate(messages);
      const existing = current.items.find((item) => item.messageIds.includes(target.id));
      if (existing?.honoured) return existing;
      const closure = pinClosure(messages, [target.id]);
      const honouredIds = new Set(current.items.flatMap((item) => (item.honoured ? item.messageIds : [])));
      const added = estimateTokens(
        messages.filter((message) => closure.messageIds.has(message.id) && !honouredIds.has(message.id)),
      );
      if (current.total + added > cap()) {
        throw new PinLimitError(
          current.total,
          added,
          cap(),
          `Pinning ${target.id} would take the pinned messages to ${current.total + added} tokens, over their cap of ${cap()} (${Math.round(maxShare * 100)}% of the ${contextWindow()}-token window): unpin a message first (pins() lists them with their sizes), or pin a smaller one.`,
        );
      }
      if (!existing) {
        pins.push({ messageId: target.id, ...(by ? { by } : {}) });
        view.appendPin([target.id], true, by);
      }
      const wanted = existing?.messageId ?? target.id;
      return evaluate(view.view).items.find((candidate) => candidate.messageId === wanted)!;
    },
    unpin(id) {
      const target = resolvePinTarget(view.view, id);
      const messageId = target?.id ?? id;
      const matching = evaluate(view.view).items.filter(
        (item) => item.messageId === id || item.messageIds.includes(messageId),
      );
      if (matching.length === 0) return false;
      const ids = new Set(matching.map((item) => item.messageId));
      pins = pins.filter((pin) => !ids.has(pin.messageId));
      for (const removed of ids) unhonoured.delete(removed);
      view.appendPin([...ids], false, undefined);
      return true;
    },
    status() {
      const { items, total } = evaluate(view.view);
      return { items, tokens: total, capTokens: cap(), maxShare };
    },
    honoured() {
      if (pins.length === 0) return NO_PINS;
      const { items } = evaluate(view.view);
      for (const item of items) {
        if (item.honoured || item.messageIds.length === 0) {
          unhonoured.delete(item.messageId);
          continue;
        }
        if (unhonoured.has(item.messageId)) continue;
        unhonoured.add(item.messageId);
        events.emit({
          type: "pins-unhonoured",
          messageIds: item.messageIds,
          tokens: item.tokens,
          capTokens: cap(),
        });
      }
      return pinClosure(
        view.view,
        items.filter((item) => item.honoured).map((item) => item.messageId),
      );
    },
  };
}
