import type { Message, SessionMemorySource } from "@unforget/core";
import {
  type CarriedUserMessage,
  carryUserMessages,
  renderCarriedUserMessages,
  userMessageBudget,
} from "../conversation/carried-user-messages.ts";
import { continuationBlock, continuationBudget } from "../conversation/continuation.ts";
import { estimateTextTokens, estimateTokens } from "../conversation/conversation.ts";
import { calculateKeepStart, type KeepWindowOptions } from "../conversation/keep-window.ts";
import { findNewestTurn, newestRoundStart } from "../conversation/newest-turn.ts";
import {
  CONTINUATION_MIN_TOKENS,
  EXTRACTION_WAIT_MS,
  NOTES_KEEP_FLOOR_TOKENS,
  NOTES_KEEP_MAX_TOKENS,
  NOTES_KEEP_MIN_TEXT_MESSAGES,
  NOTES_KEEP_MIN_TOKENS,
  USER_MESSAGES_SHARE_OF_SUMMARIZED,
} from "../defaults.ts";
import type { CompactionOutcome, ContinuationStyle } from "../summary/compaction-outcome.ts";
import { defineLayer, plural, SUMMARY_REQUEST, type SummaryLayer, scaleFor, summaryDue } from "./layer.ts";

export interface SessionMemoryCompactOptions {
  source: SessionMemorySource;
  /** The auto-compact threshold: a result at or above it is rejected (it would fire again at once). */
  threshold: number;
  /** The verbatim tail: defaults 10,000–40,000 tokens and 5 text messages (scale them down for small windows). */
  keep?: KeepWindowOptions;
  /** Never keep anything before this index (the latest boundary). */
  floor?: number;
  continuation?: ContinuationStyle;
  /** How long to wait for an extraction in flight; default 15 s. */
  waitMs?: number;
  /** Estimated tokens of what the caller adds after the compaction (attachments), counted against the threshold. */
  reservedTokens?: number;
  /** Most tokens the user's messages carried beside the notes may take before older long ones are shortened; default: no limit. */
  userMessageBudgetTokens?: number;
  /** The session folder: shortened user messages are saved whole to `<sessionDir>/user-messages/`. */
  sessionDir?: string;
  /** The summary's budget, of which the continuation (`<continuation>`) may take its share; default 1,600 tokens. */
  summaryMaxTokens?: number;
}

/**
 * Compaction without a model call: the session notes (kept up to date in the background by a memory package)
 * stand for everything they cover, and the recent messages after the last one they cover stay verbatim —
 * at least `minTokens` and `minTextMessages`, at most `maxTokens`, never past `floor`, never splitting a tool
 * pair or a response. Resolves to undefined when there are no notes (or only the empty template), when the
 * notes cover nothing yet, or when the result would still be at or above the threshold.
 */
export async function sessionMemoryCompact(
  messages: readonly Message[],
  options: SessionMemoryCompactOptions,
): Promise<CompactionOutcome | undefined> {
  await options.source.waitForPendingExtraction({ timeoutMs: options.waitMs ?? EXTRACTION_WAIT_MS });
  const notes = await options.source.readNotes();
  if (!notes || notes.text.trim().length === 0) return undefined;
  const floor = Math.max(0, options.floor ?? 0);
  let from = floor;
  if (notes.lastSummarizedMessageId !== undefined) {
    const index = messages.findIndex((message) => message.id === notes.lastSummarizedMessageId);
    if (index >= 0) from = Math.max(floor, index + 1);
  } else {
    from = messages.length;
  }
  // The newest tool round always stays verbatim.
  const turn = findNewestTurn(messages);
  const start = calculateKeepStart(messages, {
    ...options.keep,
    floor,
    from: Math.min(from, newestRoundStart(messages, turn)),
  });
  const summarized = messages.slice(0, start);
  if (summarized.length === 0) return undefined;
  const kept = messages.slice(start);
  const carried = await carryUserMessages([], summarized, {
    ...(options.userMessageBudgetTokens !== undefined
      ? { budgetTokens: options.userMessageBudgetTokens }
      : {}),
    shareOfSummarized: USER_MESSAGES_SHARE_OF_SUMMARIZED,
    ...(turn.userMessageId !== undefined ? { newestUserMessageId: turn.userMessageId } : {}),
    ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
  });
  // Where the work stands, derived from the replaced messages whatever the notes say.
  const standing = continuationBlock(
    summarized,
    kept,
    continuationBudget(options.summaryMaxTokens ?? CONTINUATION_MIN_TOKENS * 4, summarized),
    { carriedVerbatim: carried.flatMap((message) => ("text" in message ? [message.text] : [])) },
  );
  const messageText = notesMessageText(
    notes.text,
    notes.path,
    options.continuation ?? "interactive",
    carried,
    options.sessionDir,
    standing,
  );
  const tokensAfter = estimateTextTokens(messageText) + estimateTokens(kept);
  if (tokensAfter + (options.reservedTokens ?? 0) >= options.threshold) return undefined;
  return {
    mode: "boundary",
    summary: notes.text,
    messageText,
    keptMessageIds: kept.map((message) => message.id),
    summarizedMessageIds: summarized.map((message) => message.id),
    tokensBefore: estimateTokens(messages),
    tokensAfter,
    summarizer: { name: "session-memory", calls: 0, inputTokens: 0, outputTokens: 0 },
    ptlRetries: 0,
    pieces: 1,
  };
}

function notesMessageText(
  notes: string,
  path: string | undefined,
  continuation: ContinuationStyle,
  userMessages: readonly CarriedUserMessage[],
  sessionDir: string | undefined,
  standing: string | undefined,
): string {
  const parts = [
    "This session continues an earlier conversation that ran out of context. These are the session notes that were kept up to date during it; they stand for the earlier part.",
    "",
    "<session-notes>",
    notes.trim(),
    "</session-notes>",
  ];
  // Every message the user wrote in the part the notes stand for, whatever the notes say of it.
  if (userMessages.length > 0) parts.push("", renderCarriedUserMessages(userMessages, sessionDir));
  if (standing) parts.push("", standing);
  if (path) parts.push("", `The full notes are at ${path}.`);
  if (continuation === "interactive") {
    parts.push("", "Continue from where the conversation stopped without asking the user anything further.");
  } else if (continuation === "autonomous") {
    parts.push(
      "",
      "You are running autonomously and this is not a fresh start: continue the work loop from where it stopped.",
    );
  }
  return parts.join("\n");
}

export interface SessionMemoryLayerOptions {
  source: SessionMemorySource;
  /** The verbatim tail; defaults 10,000–40,000 tokens and 5 text messages, scaled down for small windows. */
  keep?: KeepWindowOptions;
}

/**
 * Session-memory compaction as a layer: at the threshold (or when a summary is asked for), the session notes
 * stand for the older messages, with no model call. It asks for fresh notes at the early mark. It does not
 * answer a reactive or partial compaction (the notes cover a prefix, not a range).
 */
export function createSessionMemoryLayer(options: SessionMemoryLayerOptions): SummaryLayer {
  return defineLayer({
    name: "session-memory",
    label: "Session memory",
    color: "#db2777",
    kind: "summary",
    due: (state) =>
      state.trigger === "reactive" || state.requested.get(SUMMARY_REQUEST)?.range
        ? false
        : summaryDue(state, false),
    async run(messages, context) {
      const scale = scaleFor(context.threshold);
      return sessionMemoryCompact(messages, {
        source: options.source,
        threshold: context.threshold,
        continuation: context.continuation,
        reservedTokens: context.reservedTokens,
        userMessageBudgetTokens: userMessageBudget(context.summaryMaxTokens),
        summaryMaxTokens: context.summaryMaxTokens,
        ...(context.sessionDir ? { sessionDir: context.sessionDir } : {}),
        keep: {
          minTokens: Math.round(NOTES_KEEP_MIN_TOKENS * scale),
          maxTokens: Math.max(NOTES_KEEP_FLOOR_TOKENS, Math.round(NOTES_KEEP_MAX_TOKENS * scale)),
          minTextMessages: NOTES_KEEP_MIN_TEXT_MESSAGES,
          ...options.keep,
        },
      });
    },
    early() {
      options.source.requestUpdate?.("early-mark");
    },
    describe: (report) =>
      `Summarised ${plural(report.messagesSummarized ?? 0, "message")} from the session notes; kept ${plural(report.stats.kept ?? 0, "recent message")} verbatim.`,
  });
}
