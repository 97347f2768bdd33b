import type { Message } from "@unforget/core";
import type { CarriedUserMessage } from "./carried-user-messages.ts";

/**
 * The user's oldest carried messages, once even their shortest form no longer fits the budget: not shown, but
 * named as one range of history ids (`first..last`, oldest first, `count` messages) that `history_read` lists and
 * reads back byte-exact. Its size does not grow with `count`.
 */
export interface FoldedUserMessages {
  /** How many user messages the range stands for. */
  folded: number;
  /** History id of the oldest (`<message id>:<text block>`). */
  first: string;
  /** History id of the newest. */
  last: string;
}

/** The history id of a message's user text: its first non-blank text block (what `@unforget/history` indexes). */
export function userHistoryId(message: Message): string | undefined {
  const part = message.content.findIndex((block) => block.type === "text" && block.text.trim() !== "");
  if (part < 0 || !isFoldableId(message.id)) return undefined;
  return `${message.id}:${part}`;
}

/**
 * Ids a fold can name: no quote, angle bracket or whitespace (they sit in an attribute) and no `..` (the range
 * separator). Messages with other ids stay shown, never folded.
 */
function isFoldableId(id: string): boolean {
  return /^[\w.:@+/=-]+$/.test(id) && !id.includes("..");
}

/** The id `history_read` takes for the range: `first..last`. */
const foldRangeId = (fold: FoldedUserMessages) => `${fold.first}..${fold.last}`;

/** A fold as rendered (the body is one line the reader does not need). */
export const FOLD =
  /<user-messages-folded count="(\d+)" first="([^"\s<>]+)" last="([^"\s<>]+)">\n[^\n]*\n<\/user-messages-folded>/;

/** The fold as the block renders it: one element of constant size whatever it stands for. */
export function renderFold(fold: FoldedUserMessages): string {
  const many = fold.folded === 1 ? "message" : "messages";
  return [
    `<user-messages-folded count="${fold.folded}" first="${fold.first}" last="${fold.last}">`,
    `The user's ${fold.folded} oldest ${many} here are folded, not lost: history_read id "${foldRangeId(fold)}" lists them in order, and history_read of each id gives one back exactly (the transcript has them too).`,
    "</user-messages-folded>",
  ].join("\n");
}

/** Every fold a request's text names (for checks that a folded message is still reachable). */
export function foldsIn(text: string): FoldedUserMessages[] {
  const all = new RegExp(FOLD.source, "g");
  return [...text.matchAll(all)].map((match) => ({
    folded: Number(match[1]),
    first: match[2]!,
    last: match[3]!,
  }));
}

export interface FoldOptions {
  /** Tokens of a carried list as the block renders it. */
  cost: (messages: readonly CarriedUserMessage[]) => number;
  budgetTokens: number;
  /** The last one is the user's newest message: never folded. */
  keepLast: boolean;
}

/**
 * The carried messages with the fewest oldest ones folded into one range that brings them within the budget
 * (all that can be, when nothing less does). Only one run is folded — from the first fold or message with a
 * history id, the folds and messages with an id that follow it, oldest first — so the range stays contiguous.
 * Messages without an id (read from a summary written before folds) stay shown, before the fold.
 */
export function foldOldest(
  messages: readonly CarriedUserMessage[],
  options: FoldOptions,
): CarriedUserMessage[] {
  if (options.cost(messages) <= options.budgetTokens) return [...messages];
  const limit = options.keepLast ? messages.length - 1 : messages.length;
  let start = 0;
  while (start < limit && rangeOf(messages[start]!) === undefined) start++;
  let end = start;
  while (end < limit && rangeOf(messages[end]!) !== undefined) end++;
  const foldable = end - start;
  // Folding one message that is not a fold already saves nothing: a fold costs more than a short message.
  if (foldable === 0 || (foldable === 1 && !("folded" in messages[start]!))) return [...messages];
  const folded = (count: number) => [
    ...messages.slice(0, start),
    merge(messages.slice(start, start + count)),
    ...messages.slice(start + count),
  ];
  let low = 1;
  let high = foldable;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (options.cost(folded(middle)) <= options.budgetTokens) high = middle;
    else low = middle + 1;
  }
  return folded(low);
}

/** The range a carried message stands for: a fold's, or a message's own id; undefined without an id. */
function rangeOf(message: CarriedUserMessage): FoldedUserMessages | undefined {
  if ("folded" in message) return message;
  return message.id === undefined ? undefined : { folded: 1, first: message.id, last: message.id };
}

function merge(run: readonly CarriedUserMessage[]): FoldedUserMessages {
  const ranges = run.map((message) => rangeOf(message)!);
  return {
    folded: ranges.reduce((sum, range) => sum + range.folded, 0),
    first: ranges[0]!.first,
    last: ranges.at(-1)!.last,
  };
}

/**
 * The user's messages (of `users`, in order) that folds name: a fold counts only when both its ends are among
 * them, in order, and it stands for exactly the messages between them — so a fold that resolves to anything else
 * keeps none. Returns their message ids.
 */
export function messagesInFolds(
  users: readonly Message[],
  folds: readonly FoldedUserMessages[],
): Set<string> {
  const position = new Map<string, number>();
  users.forEach((message, index) => {
    const id = userHistoryId(message);
    if (id !== undefined) position.set(id, index);
  });
  const kept = new Set<string>();
  for (const fold of folds) {
    const first = position.get(fold.first);
    const last = position.get(fold.last);
    if (first === undefined || last === undefined || last - first + 1 !== fold.folded) continue;
    for (let index = first; index <= last; index++) kept.add(users[index]!.id);
  }
  return kept;
}
