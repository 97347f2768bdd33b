import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import { continuationBlock, continuationBudget } from "../conversation/continuation.ts";
import {
  clip,
  estimateTextTokens,
  estimateTokens,
  hasToolUse,
  isToolOutputMessage,
  isUserAuthored,
  userText,
} from "../conversation/conversation.ts";
import { findNewestTurn, newestRoundStart } from "../conversation/newest-turn.ts";
import { CONTINUATION_MIN_TOKENS, QUOTE_CHARS, SNIP_KEEP_HEAD, SNIP_MAX_MESSAGES } from "../defaults.ts";
import { defineLayer, type EditLayer, messagesTarget, plural } from "./layer.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";

export interface SnipOptions extends LayerTimeOptions {
  /** Snip when there are more messages than this; default 50. */
  maxMessages?: number;
  /** Messages kept at the head; default 3. */
  keepHead?: number;
  /** Messages kept at the tail; default `maxMessages − keepHead` (47). */
  keepTail?: number;
  /**
   * Snip by size as well: when the messages' estimated tokens exceed this, the tail is shortened (never below
   * the last round of tool calls) until the rest fits. Default: count only.
   */
  maxTokens?: number;
}

/**
 * Trims the middle of the conversation without a model call: the head (the task and its opening context)
 * and the tail (the current work) stay, and one placeholder says how many messages were snipped and carries
 * the user's own messages from the snipped part verbatim (so no instruction is silently dropped). The cut
 * never separates a tool_use from its tool_result. The transcript keeps everything; only the projection
 * changes. Does nothing when the placeholder would not be smaller than what it replaces.
 */
export function snipCompact(messages: readonly Message[], options: SnipOptions = {}): LayerResult {
  const maxMessages = Math.max(2, options.maxMessages ?? SNIP_MAX_MESSAGES);
  const keepHead = Math.max(1, options.keepHead ?? SNIP_KEEP_HEAD);
  // Room for the placeholder, so that the result has at most `maxMessages` messages and a second run does nothing.
  const keepTail = Math.max(1, options.keepTail ?? maxMessages - keepHead - 1);
  const overCount = messages.length > maxMessages;
  const overTokens = options.maxTokens !== undefined && estimateTokens(messages) > options.maxTokens;
  if (!overCount && !overTokens) return unchanged(messages);

  let headEnd = Math.min(keepHead, messages.length);
  while (
    headEnd < messages.length &&
    hasToolUse(messages[headEnd - 1]) &&
    isToolOutputMessage(messages[headEnd])
  ) {
    headEnd++;
  }
  const turn = findNewestTurn(messages);
  // The newest tool round always stays in the tail.
  const latest = newestRoundStart(messages, turn);
  let tailStart = Math.max(headEnd, Math.min(latest, messages.length - keepTail));
  if (overTokens && options.maxTokens !== undefined) {
    tailStart = Math.min(latest, shortenTail(messages, headEnd, tailStart, options.maxTokens));
  }
  // Tool output at the cut goes with its call into the snipped part, so the tail never grows past its size.
  while (
    tailStart < Math.min(latest, messages.length - 1) &&
    isToolOutputMessage(messages[tailStart]) &&
    messages[tailStart - 1]?.role === "assistant"
  ) {
    tailStart++;
  }
  const removed = messages.slice(headEnd, tailStart);
  if (removed.length === 0 || (removed.length === 1 && isPlaceholder(removed[0]!)))
    return unchanged(messages);

  const text = placeholderText(removed, turn.userMessageId, {
    before: messages.slice(0, headEnd),
    kept: messages.slice(tailStart),
  });
  const tokensFreed = estimateTokens(removed) - estimateTextTokens(text);
  if (tokensFreed <= 0) return unchanged(messages);
  const edits: ContextEdit[] = [
    {
      kind: "replace_messages",
      messageIds: removed.map((message) => message.id),
      details: { replacement: { id: `snip_${removed[0]!.id}`, role: "user", text }, reason: "snip" },
    },
  ];
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, { snipped: removed.length });
}

/** Moves the tail start forward until head + placeholder + tail fit `maxTokens`, keeping the last round. */
function shortenTail(
  messages: readonly Message[],
  headEnd: number,
  tailStart: number,
  maxTokens: number,
): number {
  const head = estimateTokens(messages.slice(0, headEnd)) + 200;
  let tail = estimateTokens(messages.slice(tailStart));
  let start = tailStart;
  const lastRound = lastRoundStart(messages);
  while (head + tail > maxTokens && start < lastRound) {
    tail -= estimateTokens([messages[start]!]);
    start++;
  }
  return start;
}

/** Index of the last API round: the last assistant message with tool calls and what answers it, or the last message. */
function lastRoundStart(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]!.role === "assistant") return index;
  }
  return messages.length - 1;
}

function isPlaceholder(message: Message): boolean {
  return message.isMeta === true && message.metadata?.reason === "snip";
}

function placeholderText(
  removed: readonly Message[],
  newestUserMessageId: string | undefined,
  around: { before: readonly Message[]; kept: readonly Message[] },
): string {
  // The user's words quoted by an earlier snip placeholder are carried into the new one; the newest whole.
  const quotes = removed.flatMap((message) =>
    isUserAuthored(message)
      ? [
          `- "${message.id === newestUserMessageId ? userText(message) : clip(userText(message), QUOTE_CHARS)}"`,
        ]
      : isPlaceholder(message)
        ? userText(message)
            .split("\n")
            .filter((line) => line.startsWith('- "'))
        : [],
  );
  const header = `[${removed.length} earlier messages were snipped from the middle of this conversation to save context; the full transcript is kept on disk.]`;
  // Where the work stands (done calls, open errors, the latest call), derived from what was snipped.
  const whole = removed.flatMap((message) =>
    isUserAuthored(message) && (message.id === newestUserMessageId || userText(message).length <= QUOTE_CHARS)
      ? [userText(message)]
      : [],
  );
  const standing = continuationBlock(
    removed,
    around.kept,
    continuationBudget(CONTINUATION_MIN_TOKENS * 4, removed),
    {
      before: around.before,
      carriedVerbatim: whole,
    },
  );
  const parts = [header];
  if (quotes.length > 0) parts.push(`The user's messages among them, verbatim:\n${quotes.join("\n")}`);
  if (standing) parts.push(standing);
  return parts.join("\n");
}

/**
 * Snip as a layer: when the model asks for it (the snip tool), and — when `auto` options are given — in a
 * batch of the cheap layers while the context is above the target.
 */
export function createSnipLayer(auto?: Omit<SnipOptions, "now">): EditLayer {
  return defineLayer({
    name: "snip",
    label: "Snip",
    color: "#64748b",
    kind: "edit",
    // By size only when configured; otherwise only the snip tool asks for it.
    onRequestOnly: auto === undefined,
    due(state) {
      if (state.requested.has("snip")) return "the model asked for a snip";
      return auto && state.trigger === "auto" && state.batch && state.tokens > state.target
        ? "context at the cheap-layer level"
        : false;
    },
    run(messages, context) {
      const keep = context.request?.keepRecentMessages;
      if (keep !== undefined) {
        return snipCompact(messages, {
          maxMessages: keep + 1,
          keepHead: 1,
          keepTail: keep,
          now: context.now,
        });
      }
      return snipCompact(messages, {
        maxTokens: messagesTarget(messages, context),
        ...auto,
        now: context.now,
      });
    },
    describe: (report) =>
      `Snipped ${plural(report.stats.snipped ?? 0, "message")} from the middle: ${report.reason}.`,
  });
}
