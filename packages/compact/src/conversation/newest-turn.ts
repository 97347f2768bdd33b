import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import { isToolOutputMessage, isUserAuthored, userText } from "./conversation.ts";

/** The newest turn: the newest user message and the newest tool results. No layer may edit them away. */
export interface NewestTurn {
  /** The newest message the user wrote, when there is one. */
  userMessageId?: string;
  /** Its text (a layer that removes it must quote it whole). */
  userText?: string;
  /** The newest tool output message and the assistant message(s) that made its calls. */
  outputMessageIds: ReadonlySet<string>;
  /** Tool_use ids of the newest tool results. */
  toolUseIds: ReadonlySet<string>;
}

/**
 * The newest turn of a conversation: the newest message the user wrote, and — when it came after that message —
 * the newest tool output (the last message that carries tool results, or the last observation) with the
 * assistant message that made its calls.
 * Every request keeps them: the budget may cut them in the middle, but no layer clears or folds them, and a
 * layer that removes the user's message must quote it whole.
 */
export function findNewestTurn(messages: readonly Message[]): NewestTurn {
  const outputIds = new Set<string>();
  const toolUseIds = new Set<string>();
  let user: Message | undefined;
  // The newest tool output belongs to the newest turn only when it came after the user's newest message: an
  // output from before it belongs to an earlier turn, which a summary may stand for.
  for (let index = messages.length - 1; index >= 0 && !user; index--) {
    const message = messages[index]!;
    if (isUserAuthored(message)) user = message;
    if (outputIds.size > 0 || !isToolOutputMessage(message)) continue;
    outputIds.add(message.id);
    for (const block of message.content) if (block.type === "tool_result") toolUseIds.add(block.tool_use_id);
    // The calls it answers: the assistant messages just before it (or the action of an observation).
    for (let back = index - 1; back >= 0; back--) {
      const previous = messages[back]!;
      if (previous.role !== "assistant") break;
      outputIds.add(previous.id);
      if (toolUseIds.size === 0) break;
    }
  }
  const turn: NewestTurn = { outputMessageIds: outputIds, toolUseIds };
  if (user) {
    turn.userMessageId = user.id;
    turn.userText = userText(user);
  }
  return turn;
}

/** Index of the first message of the newest tool round (where a verbatim tail must start at the latest). */
export function newestRoundStart(messages: readonly Message[], turn: NewestTurn): number {
  const index = messages.findIndex((message) => turn.outputMessageIds.has(message.id));
  return index < 0 ? messages.length : index;
}

/**
 * True when an edit would change or remove part of the newest turn: a tool result of it, a message of its
 * tool round, or the user's newest message (unless a removal quotes it whole in its replacement).
 */
export function touchesNewestTurn(edit: ContextEdit, turn: NewestTurn): boolean {
  if (edit.kind === "replace_tool_result") return edit.toolUseIds.some((id) => turn.toolUseIds.has(id));
  const ids = edit.messageIds ?? [];
  if (ids.some((id) => turn.outputMessageIds.has(id))) return true;
  if (turn.userMessageId === undefined || !ids.includes(turn.userMessageId)) return false;
  const replacement = edit.kind === "replace_messages" ? edit.details?.replacement?.text : undefined;
  return replacement === undefined || !replacement.includes(turn.userText ?? "");
}
