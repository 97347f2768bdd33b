import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Message } from "@unforget/core";
import {
  CARRIED_USER_MESSAGE_FLOOR_CHARS,
  CARRIED_USER_MESSAGE_LEVELS,
  USER_MESSAGES_MIN_TOKENS,
  USER_MESSAGES_SHARE,
} from "../defaults.ts";
import { persistOutput } from "../tool-outputs/persist-output.ts";
import { FOLD, type FoldedUserMessages, foldOldest, renderFold, userHistoryId } from "./carried-fold.ts";
import { estimateTextTokens, estimateTokens, isUserAuthored, userText } from "./conversation.ts";

/**
 * One user message as a summary message carries it: verbatim, or — when the carried messages outgrew their
 * budget — its head and tail with how much was left out and where the whole text is; or, first in the list, the
 * oldest ones folded into one range of history ids (`FoldedUserMessages`) once even their shortest form no longer
 * fits. `id` is the message's history id, what a fold names.
 */
export type CarriedUserMessage =
  | { text: string; id?: string }
  | {
      head: string;
      tail: string;
      /** Characters of the whole message. */
      chars: number;
      /** Where the whole message is: "whole text: user-messages/<name>.txt" (in the session folder) or "whole text in the transcript". */
      pointer?: string;
      id?: string;
    }
  | FoldedUserMessages;

export type { FoldedUserMessages } from "./carried-fold.ts";

const OPEN = "<user-messages>";
const CLOSE = "</user-messages>";
const INTRO =
  "The user's messages from the part the summary stands for, oldest first, verbatim (kept by the system); a cut one says where its whole text is:";
const ITEM =
  /<user-message(?: id="([^"\s<>]+)")?(?: chars="(\d+)" head="(\d+)" tail="(\d+)")?>\n([\s\S]*?)\n<\/user-message>/g;
const ITEM_OR_FOLD = new RegExp(`${ITEM.source}|${FOLD.source}`, "g");
/** How a pointer to a message saved in the session folder starts. */
const SAVED_POINTER = "whole text: ";
const MARKER = /^\[… [\d,]+ more characters(?:; (.*))?\]$/;

// A user's text could hold the tags themselves: each `<user-message…` / `</user-message…` in it gets one more
// backslash (`<\user-message`), and reading takes one away, so every text round-trips exactly.
const escapeTags = (text: string) => text.replace(/<(\/?)(\\*)(user-messages?)\b/g, "<$1\\$2$3");
const unescapeTags = (text: string) => text.replace(/<(\/?)\\(\\*)(user-messages?)\b/g, "<$1$2$3");

/** Characters of the user's own text a carried message shows (a fold shows none). */
const quotedChars = (message: CarriedUserMessage) =>
  "text" in message ? message.text.length : "head" in message ? message.head.length + message.tail.length : 0;

/** How many user messages a carried list stands for: one per message, a fold its count. */
export function carriedCount(messages: readonly CarriedUserMessage[]): number {
  return messages.reduce((sum, message) => sum + ("folded" in message ? message.folded : 1), 0);
}

/** The text a carried message shows: the message, or its head, what was left out and its tail; a fold, its pointer. */
export function shown(message: CarriedUserMessage): string {
  if ("text" in message) return message.text;
  if ("folded" in message) return renderFold(message);
  return `${message.head}\n${marker(message)}\n${message.tail}`;
}

type CutMessage = Extract<CarriedUserMessage, { head: string }>;

function marker(message: CutMessage): string {
  const left = message.chars - message.head.length - message.tail.length;
  const count = (value: number) => value.toLocaleString("en-US");
  return `[… ${count(left)} more characters${message.pointer ? `; ${message.pointer}` : ""}]`;
}

/**
 * The block a summary message ends its summary with: each carried message in its own tags, oldest first, and
 * where the cut ones are saved (`sessionDir`, named once) when there are any.
 */
export function renderCarriedUserMessages(
  messages: readonly CarriedUserMessage[],
  sessionDir?: string,
): string {
  const saved =
    sessionDir !== undefined &&
    messages.some((message) => "pointer" in message && message.pointer?.startsWith(SAVED_POINTER));
  const items = messages.map((message) => {
    if ("folded" in message) return renderFold(message);
    const id = message.id === undefined ? "" : ` id="${message.id}"`;
    return "text" in message
      ? `<user-message${id}>\n${escapeTags(message.text)}\n</user-message>`
      : `<user-message${id} chars="${message.chars}" head="${message.head.length}" tail="${message.tail.length}">\n${escapeTags(shown(message))}\n</user-message>`;
  });
  return [
    OPEN,
    INTRO,
    ...(saved ? [`(Cut messages are saved whole under ${sessionDir}.)`] : []),
    ...items,
    CLOSE,
  ].join("\n");
}

/**
 * The user's messages a summary message (or a placeholder) carries, read back exactly from its last
 * `<user-messages>` block; undefined when it has none.
 */
export function readCarriedUserMessages(text: string): CarriedUserMessage[] | undefined {
  const start = text.lastIndexOf(`\n${OPEN}\n`);
  const from = start >= 0 ? start + 1 : text.startsWith(`${OPEN}\n`) ? 0 : -1;
  if (from < 0) return undefined;
  const end = text.indexOf(`\n${CLOSE}`, from);
  const block = text.slice(from, end < 0 ? text.length : end + 1 + CLOSE.length);
  const messages: CarriedUserMessage[] = [];
  for (const match of block.matchAll(ITEM_OR_FOLD)) {
    if (match[6] !== undefined) {
      messages.push({ folded: Number(match[6]), first: match[7]!, last: match[8]! });
      continue;
    }
    const body = unescapeTags(match[5]!);
    const id = match[1] === undefined ? {} : { id: match[1] };
    if (match[2] === undefined) {
      messages.push({ text: body, ...id });
      continue;
    }
    const chars = Number(match[2]);
    const headLength = Number(match[3]);
    const tailLength = Number(match[4]);
    const head = body.slice(0, headLength);
    const tail = tailLength > 0 ? body.slice(body.length - tailLength) : "";
    const middle = body.slice(headLength + 1, body.length - tailLength - 1);
    const pointer = MARKER.exec(middle)?.[1];
    messages.push({ head, tail, chars, ...(pointer ? { pointer } : {}), ...id });
  }
  return messages;
}

/**
 * What a new summary carries: the messages the previous summary carried, then, in order, every message the
 * user wrote in the summarised part and those that placeholders or earlier summaries in it carried.
 */
export function collectCarriedUserMessages(
  previous: readonly CarriedUserMessage[],
  summarized: readonly Message[],
): CarriedUserMessage[] {
  const carried = [...previous];
  for (const message of summarized) {
    if (isUserAuthored(message)) {
      const id = userHistoryId(message);
      carried.push({ text: userText(message), ...(id ? { id } : {}) });
    } else if (message.role === "user" && message.isMeta) {
      carried.push(...(readCarriedUserMessages(userText(message)) ?? []));
    }
  }
  return carried;
}

export interface FitCarriedOptions {
  /** Most tokens the carried messages should take. */
  budgetTokens: number;
  /** The last one is the user's newest message (the newest turn): it stays verbatim whatever its size. */
  keepLast?: boolean;
  /** The session folder: a shortened message is saved whole to `<sessionDir>/user-messages/`. */
  sessionDir?: string;
  /** The transcript, which has every message whole, for a pointer when there is no session folder. */
  transcriptPath?: string;
}

/**
 * The carried messages within their budget. All verbatim when they fit. Otherwise, level by level (2,000, then
 * 600, then 160, then 100 characters), the oldest messages longer than the level are shortened to it (their head
 * and tail) until the rest fits: the user's newest message (`keepLast`) stays verbatim, and the whole text stays
 * reachable — saved to the session folder (written before anything points at it), else in the transcript. A
 * message already shortened keeps its pointer. When even that does not fit, the oldest are folded into one
 * range of history ids (`foldOldest`), as few as it takes, so the block has a bound however long the session.
 */
export async function fitCarriedUserMessages(
  messages: readonly CarriedUserMessage[],
  options: FitCarriedOptions,
): Promise<CarriedUserMessage[]> {
  const fitted = [...messages];
  const cost = () => estimateTextTokens(renderCarriedUserMessages(fitted));
  if (fitted.length === 0 || cost() <= options.budgetTokens) return fitted;
  const shortenable = options.keepLast ? fitted.length - 1 : fitted.length;
  for (const level of [...CARRIED_USER_MESSAGE_LEVELS, CARRIED_USER_MESSAGE_FLOOR_CHARS]) {
    for (let index = 0; index < shortenable; index++) {
      const message = fitted[index]!;
      if (quotedChars(message) <= level) continue;
      fitted[index] = await shorten(message, level, options);
      if (cost() <= options.budgetTokens) return fitted;
    }
  }
  return foldOldest(fitted, {
    cost: (messages) => estimateTextTokens(renderCarriedUserMessages(messages)),
    budgetTokens: options.budgetTokens,
    keepLast: options.keepLast ?? false,
  });
}

/** What the user's messages carried beside a summary may take of its budget before older long ones are shortened. */
export function userMessageBudget(summaryMaxTokens: number): number {
  return Math.max(USER_MESSAGES_MIN_TOKENS, Math.floor(summaryMaxTokens * USER_MESSAGES_SHARE));
}

export interface CarryOptions extends Omit<FitCarriedOptions, "budgetTokens" | "keepLast"> {
  /** The summary layer's budget for them (`userMessageBudget`); default none. */
  budgetTokens?: number;
  /** The share of the summarised part's tokens they may take at most. */
  shareOfSummarized: number;
  /** The user's newest message: carried whole when the summary stands for it (the newest turn stays). */
  newestUserMessageId?: string;
}

/**
 * The user's messages a summary (or the session notes) standing for `summarized` carries: those `previous`
 * carried, then every one of the summarised part (`collectCarriedUserMessages`), fitted into the smaller of the
 * layer's budget and their share of the summarised part (`fitCarriedUserMessages`).
 */
export function carryUserMessages(
  previous: readonly CarriedUserMessage[],
  summarized: readonly Message[],
  options: CarryOptions,
): Promise<CarriedUserMessage[]> {
  const { budgetTokens, shareOfSummarized, newestUserMessageId, ...fit } = options;
  return fitCarriedUserMessages(collectCarriedUserMessages(previous, summarized), {
    ...fit,
    budgetTokens: Math.min(
      budgetTokens ?? Number.POSITIVE_INFINITY,
      Math.floor(estimateTokens(summarized) * shareOfSummarized),
    ),
    keepLast: summarized.some((message) => message.id === newestUserMessageId),
  });
}

/** A message cut to about `chars` characters: three quarters from its head, a quarter from its tail, the head never under the floor. */
async function shorten(
  message: CarriedUserMessage,
  chars: number,
  options: FitCarriedOptions,
): Promise<CarriedUserMessage> {
  const headChars = Math.min(chars, Math.max(CARRIED_USER_MESSAGE_FLOOR_CHARS, Math.ceil(chars * 0.75)));
  const tailChars = chars - headChars;
  if ("folded" in message) return message;
  const id = message.id === undefined ? {} : { id: message.id };
  if ("head" in message) {
    return {
      head: message.head.slice(0, headChars),
      tail: message.tail.slice(Math.max(0, message.tail.length - tailChars)),
      chars: message.chars,
      ...(message.pointer ? { pointer: message.pointer } : {}),
      ...id,
    };
  }
  const text = message.text;
  let pointer: string | undefined;
  if (options.sessionDir) {
    const name = createHash("sha256").update(text).digest("hex").slice(0, 16);
    const path = join(options.sessionDir, "user-messages", `${name}.txt`);
    // A folder that cannot be written to leaves the transcript as the place of the whole text.
    pointer = await persistOutput(path, text).then(
      () => `${SAVED_POINTER}user-messages/${name}.txt`,
      () => undefined,
    );
  }
  if (pointer === undefined && options.transcriptPath) {
    pointer = "whole text in the transcript";
  }
  return {
    head: text.slice(0, headChars),
    tail: text.slice(text.length - tailChars),
    chars: text.length,
    ...(pointer ? { pointer } : {}),
    ...id,
  };
}
