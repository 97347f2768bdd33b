import type { Message } from "@unforget/core";
import { isTextObservation, resultText, userText } from "../conversation/conversation.ts";
import { isClearedResult } from "../layers/clearable-outputs.ts";
import { isFoldableRound } from "../layers/collapse-context.ts";
import { clearablePredicate, retentionLookup } from "../tool-outputs/compactable-tools.ts";

/** Which messages a cheap layer could still change, for one rule of which tools' results may be cleared. */
export interface ChangeableMessages {
  /** True when the assistant message at `index` and the answer after it form a round collapse may fold. */
  foldableAt(messages: readonly Message[], index: number): boolean;
  /** True when the user message at `index` holds a tool output microcompact may still clear. */
  clearableAt(messages: readonly Message[], index: number): boolean;
}

/**
 * The changeable messages for `clearable` (which tools' results the cheap layers may clear; default the
 * well-known reproducible names, as a manager without a session folder or tool declarations has). Messages
 * never change (an edit makes new ones), so each answer is remembered per message: the manager asks on every
 * call, and a long session must not make every call walk every block again.
 */
export function createChangeableMessages(
  clearable: (toolName: string) => boolean = clearablePredicate(retentionLookup(), undefined),
): ChangeableMessages {
  const foldableAfter = new WeakMap<Message, { answer: Message; foldable: boolean }>();
  const clearableOutput = new WeakMap<Message, boolean>();
  return {
    foldableAt(messages, index) {
      const assistant = messages[index]!;
      const answer = messages[index + 1];
      if (!answer || assistant.role !== "assistant") return false;
      const known = foldableAfter.get(assistant);
      if (known?.answer === answer) return known.foldable;
      const foldable = isFoldableRound(assistant, answer, clearable);
      foldableAfter.set(assistant, { answer, foldable });
      return foldable;
    },
    clearableAt(messages, index) {
      const message = messages[index]!;
      const known = clearableOutput.get(message);
      if (known !== undefined) return known;
      let found = false;
      if (isTextObservation(message)) found = !isClearedResult(userText(message));
      else {
        for (const block of message.content) {
          if (block.type !== "tool_result" || isClearedResult(resultText(block))) continue;
          const name = toolName(messages, index, block.tool_use_id);
          if (name !== undefined && clearable(name)) {
            found = true;
            break;
          }
        }
      }
      clearableOutput.set(message, found);
      return found;
    },
  };
}

const defaultChangeable = createChangeableMessages();

/**
 * Index of the first message a cheap layer could still change: the first completed tool round collapse may
 * fold, or the first tool output microcompact may clear. Every message before it is settled: until the next
 * summary, no cheap layer touches it. Linear, and it stops at the first such message; `from` skips messages
 * known to be settled.
 */
export function settledMessages(
  messages: readonly Message[],
  from = 0,
  changeable: ChangeableMessages = defaultChangeable,
): number {
  for (let index = from; index < messages.length; index++) {
    const role = messages[index]!.role;
    if (role === "assistant" && changeable.foldableAt(messages, index)) return index;
    if (role === "user" && changeable.clearableAt(messages, index)) return index;
  }
  return messages.length;
}

/** The name of the call a result answers: in the assistant messages just before it (where calls are). */
function toolName(messages: readonly Message[], resultIndex: number, id: string): string | undefined {
  for (let index = resultIndex - 1; index >= 0; index--) {
    const message = messages[index]!;
    for (const block of message.content) if (block.type === "tool_use" && block.id === id) return block.name;
    if (message.role === "user" && index < resultIndex - 1) return undefined;
  }
  return undefined;
}

/**
 * `settledMessages`, for a conversation asked about call after call: when the messages before the previous
 * answer are the same objects as before, and the first changeable one is still there, the answer stands; when
 * nothing was changeable, only the new messages are looked at. Otherwise it looks again from the start.
 */
export function createSettledTracker(
  changeable: ChangeableMessages = defaultChangeable,
): (messages: readonly Message[]) => number {
  // The messages up to the previous answer (inclusive), as they were: the array itself may grow in place.
  let seen: Message[] = [];
  let length = 0;
  let settled = 0;
  return (messages) => {
    let from = 0;
    const prefix = Math.min(settled + 1, length);
    let same = prefix <= messages.length;
    for (let index = 0; index < prefix && same; index++) same = messages[index] === seen[index];
    if (same && settled < length) {
      // The first changeable message is the same object: it still is changeable, unless its round changed.
      const role = messages[settled]!.role;
      const still =
        role === "assistant"
          ? changeable.foldableAt(messages, settled)
          : changeable.clearableAt(messages, settled);
      if (still) from = -1;
    } else if (same) from = Math.max(0, settled - 1);
    if (from >= 0) settled = settledMessages(messages, from, changeable);
    length = messages.length;
    seen = messages.slice(0, Math.min(settled + 1, length));
    return settled;
  };
}

/**
 * How many blocks at the start of the request for `projected` (`toRequestMessages(projected)`) are settled
 * (see `settledMessages`): a cache breakpoint on the last of them keeps them cached when the cheap layers
 * fold what follows (`withCacheBreakpoints(prompt, { settledBlocks })`). A request message that merges settled
 * and unsettled messages is left out. 0 when nothing is settled.
 */
export function settledBlocks(projected: readonly Message[], settled = settledMessages(projected)): number {
  // The request merges neighbours of one role and skips empty messages; it starts with a stand-in user
  // message when the first is the assistant's.
  let blocks = 0;
  let run = 0;
  let role: Message["role"] | undefined;
  for (let index = 0; index < settled; index++) {
    const message = projected[index]!;
    if (message.content.length === 0) continue;
    if (role === undefined && message.role === "assistant") blocks = 1;
    if (message.role !== role) {
      blocks += run;
      run = 0;
      role = message.role;
    }
    run += message.content.length;
  }
  const next = projected.slice(settled).find((message) => message.content.length > 0);
  // The last run is whole only when the next message starts a message of its own in the request.
  if (next === undefined || next.role !== role) blocks += run;
  return role === undefined ? 0 : blocks;
}
