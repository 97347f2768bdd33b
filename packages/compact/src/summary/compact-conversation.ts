import {
  type ContentBlock,
  groupByApiRound,
  type Message,
  PromptTooLongError,
  type ToolResultBlock,
} from "@unforget/core";
import type { CompactTrigger } from "@unforget/transcript";
import { CompactionFailedError } from "../compact-error.ts";
import {
  type CarriedUserMessage,
  type CarryOptions,
  carryUserMessages,
  readCarriedUserMessages,
  userMessageBudget,
} from "../conversation/carried-user-messages.ts";
import { continuationBlock, continuationBudget } from "../conversation/continuation.ts";
import { estimateTextTokens, estimateTokens, userText } from "../conversation/conversation.ts";
import { calculateKeepStart, type KeepWindowOptions } from "../conversation/keep-window.ts";
import { findNewestTurn, newestRoundStart } from "../conversation/newest-turn.ts";
import {
  EXTRACTIVE_PROMPT_TOKENS,
  MAX_PTL_RETRIES,
  PTL_SPLIT_MARGIN,
  REACTIVE_KEEP_MESSAGES,
  SUMMARY_KEEP_TOKENS,
  SUMMARY_MAX_PIECES,
  SUMMARY_MIN_KEEP_TOKENS,
  SUMMARY_MIN_TOKENS,
  USER_MESSAGES_SHARE_OF_SUMMARIZED,
  USER_MESSAGES_SHARE_OF_SUMMARIZED_REACTIVE,
} from "../defaults.ts";
import {
  defineLayer,
  type LadderState,
  messagesTarget,
  plural,
  type SummaryLayer,
  scaleFor,
  summaryDue,
} from "../layers/layer.ts";
import type { LayerTimeOptions } from "../layers/layer-result.ts";
import type { CompactionOutcome, CompactRange, ContinuationStyle } from "./compaction-outcome.ts";
import { createExtractiveSummarizer } from "./extractive-summarizer.ts";
import type { CacheSafeParameters, Summarizer, SummaryScope } from "./summarizer.ts";
import { formatSummaryReply } from "./summary-format.ts";
import { replacedToolUseIds, summaryMessageText } from "./summary-message.ts";

export interface CompactConversationOptions extends LayerTimeOptions {
  summarizer: Summarizer;
  trigger: CompactTrigger;
  /** The user's instructions, then each PreCompact plugin's. */
  instructions?: string;
  /**
   * Which messages are summarised. Default: all but a short verbatim tail (`keep`). `{ upTo: i }`: messages
   * before `i`, the rest kept after the summary. `{ from: i }`: messages from `i` on (minus the tail), the
   * messages before `i` kept in front of the summary. The newest tool round is always in the tail.
   */
  range?: CompactRange;
  /** The verbatim tail kept after the summary; default at least one text message, at most 8,000 tokens, and always the newest tool round. */
  keep?: KeepWindowOptions;
  /**
   * Most tokens the summary message takes, every part counted: the fixed prose, the replaced calls' ids, the
   * continuation, the carried user messages and the summariser's text (asked for what the others leave).
   */
  summaryMaxTokens: number;
  /**
   * Most tokens the summariser's input may have. Above it the input is summarised in pieces (whole API rounds,
   * each piece with the summary of the ones before it), so a compaction (including a manual `/compact`) never
   * fails because the conversation is too long to summarise, and no round is left out.
   */
  maxInputTokens?: number;
  /**
   * Most tokens the user's messages carried beside the summary may take before the older long ones are
   * shortened (their whole text saved in `sessionDir`); default: what `summaryMaxTokens` leaves after the parts
   * the system derives. Never more than a quarter of what the summary stands for; what they take comes out of
   * `summaryMaxTokens` (the summariser gets the rest).
   */
  userMessageBudgetTokens?: number;
  /** The session folder: shortened user messages are saved whole to `<sessionDir>/user-messages/`. */
  sessionDir?: string;
  cacheSafe?: CacheSafeParameters;
  /** Attachment kinds that are re-injected after every compaction (so summarising them is waste); default all. */
  reinjectedAttachmentKinds?: ReadonlySet<string> | "all";
  continuation?: ContinuationStyle;
  /** Where the full transcript is, so the summary can point the model at it. */
  transcriptPath?: string;
  signal?: AbortSignal;
  onKeepAlive?: () => void;
}

/**
 * The full compaction: the messages to summarise (images and documents as markers, re-injected
 * attachments removed, the previous summary passed as the one to update), then the summariser. An input over
 * `maxInputTokens` is summarised in pieces of whole API rounds, oldest first, each with the summary of the
 * pieces before it (at most four by the summariser; older ones by the offline extractor); a piece refused as
 * too long makes the rest split again, smaller (three times at most). The summary message carries every user message of the part
 * it stands for, whatever the summariser wrote. Throws `CompactionFailedError` when nothing is left to
 * summarise or the summariser fails; the conversation is then unchanged (nothing is written until the caller
 * records the outcome).
 */
export async function compactConversation(
  messages: readonly Message[],
  options: CompactConversationOptions,
): Promise<CompactionOutcome> {
  const tokensBefore = estimateTokens(messages);
  // A partial compaction "from" keeps the opening summary in front; every other one updates it.
  const partialFrom = options.range !== undefined && "from" in options.range;
  const opening = !partialFrom && messages[0]?.isCompactSummary ? messages[0] : undefined;
  const previousSummary = opening ? formatSummaryReply(userText(opening)) : undefined;
  const turn = findNewestTurn(messages);
  const { head, summarized, tail, scope } = split(
    messages,
    options,
    opening ? 1 : 0,
    newestRoundStart(messages, turn),
  );
  if (summarized.length === 0) {
    throw new CompactionFailedError(
      "summary",
      "There is nothing to summarise: every message is in the verbatim tail. The conversation is unchanged.",
      { reason: "nothing-to-summarize" },
    );
  }
  const input = prepareForSummary(summarized, options.reinjectedAttachmentKinds ?? "all");
  // The whole summary message fits `summaryMaxTokens`. What the system derives is counted first: the fixed
  // prose with the line naming the replaced calls (bounded: first and last few ids and a count), then the
  // continuation (its budget; its floor — open errors, the user's last message — may take more); the carried
  // user messages get at most what is left (past it they fold, never dropped), the summariser the rest.
  const budget = options.summaryMaxTokens;
  const style = options.continuation ?? "interactive";
  const toolUseIds = replacedToolUseIds(summarized);
  let tight = false;
  const compose = (summary: string, carried: readonly CarriedUserMessage[], continuation?: string) =>
    summaryMessageText(
      summary,
      style,
      options.transcriptPath,
      carried,
      options.sessionDir,
      toolUseIds,
      continuation,
      tight,
    );
  const frameTokens = estimateTextTokens(compose("", []));
  const continuationMax = Math.min(continuationBudget(budget, summarized), Math.max(0, budget - frameTokens));
  const carried = await carryUserMessages(
    opening ? (readCarriedUserMessages(userText(opening)) ?? []) : [],
    summarized,
    carryOptions(options, turn.userMessageId, Math.max(0, budget - frameTokens - continuationMax)),
  );
  const continuation = continuationBlock(
    opening ? [opening, ...summarized] : summarized,
    tail,
    continuationMax,
    {
      before: head,
      carriedVerbatim: carried.flatMap((message) => ("text" in message ? [message.text] : [])),
    },
  );
  // Parts that barely fit take their shortest wording.
  tight = estimateTextTokens(compose("", carried, continuation)) > budget;
  const derivedTokens = estimateTextTokens(compose("", carried, continuation));
  const result = await summarizeInPieces(input, scope, previousSummary, {
    ...options,
    summaryMaxTokens: Math.max(SUMMARY_MIN_TOKENS, budget - derivedTokens),
  });
  // A summariser that writes past what it was given is not cut (its last sections say where the work stands):
  // the ladder declines a summary that would not shrink the context, and its thrash guard hands over to the
  // fallback summariser when summaries keep leaving too much.
  const summary = result.text;
  const messageText = compose(summary, carried, continuation);
  const kept = [...head, ...tail];
  return {
    mode: scope === "from" ? "replace" : "boundary",
    summary,
    messageText,
    keptMessageIds: kept.map((message) => message.id),
    summarizedMessageIds: [...(opening ? [opening.id] : []), ...summarized.map((message) => message.id)],
    tokensBefore,
    tokensAfter: estimateTextTokens(messageText) + estimateTokens(kept),
    summarizer: {
      name: options.summarizer.name,
      calls: result.calls,
      inputTokens: result.calls > 0 ? result.inputTokens : estimateTokens(input) + EXTRACTIVE_PROMPT_TOKENS,
      outputTokens: result.calls > 0 ? result.outputTokens : estimateTextTokens(result.text),
    },
    ptlRetries: result.ptlRetries,
    pieces: result.pieces,
  };
}

/** How the user's messages are carried: within the smaller of their budget and what the derived parts leave. */
function carryOptions(
  options: CompactConversationOptions,
  newestUserMessageId: string | undefined,
  leftTokens: number,
): CarryOptions {
  return {
    budgetTokens: Math.min(options.userMessageBudgetTokens ?? Number.POSITIVE_INFINITY, leftTokens),
    shareOfSummarized:
      options.trigger === "reactive"
        ? USER_MESSAGES_SHARE_OF_SUMMARIZED_REACTIVE
        : USER_MESSAGES_SHARE_OF_SUMMARIZED,
    // The user's newest message goes along whole when the summary stands for it (the newest turn stays).
    ...(newestUserMessageId !== undefined ? { newestUserMessageId } : {}),
    ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
    ...(options.transcriptPath ? { transcriptPath: options.transcriptPath } : {}),
  };
}

/**
 * Summarises the input, in pieces when it is over `maxInputTokens`: whole API rounds, oldest first, each piece
 * updating the summary of the ones before it, so that every round's output reaches the summary. More pieces
 * than the bound: the oldest are summarised together by the offline extractor first (no model call). A piece
 * refused as too long shows that the estimate ran short: what is left is split again, smaller by the ratio the
 * refusal states (by half when it states none), `MAX_PTL_RETRIES` times at most.
 */
async function summarizeInPieces(
  input: Message[],
  scope: SummaryScope,
  previousSummary: string | undefined,
  options: CompactConversationOptions,
): Promise<{
  text: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  ptlRetries: number;
  pieces: number;
}> {
  let maxTokens = options.maxInputTokens ?? Number.POSITIVE_INFINITY;
  let queue = splitIntoPieces(input, maxTokens);
  let previous = previousSummary;
  let pieces = 0;
  let modelPieces = 0;
  let ptlRetries = 0;
  let text = "";
  const usage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  // Past the bound, the oldest pieces go to the offline extractor together: they still reach the summary.
  const bound = async () => {
    const allowed = Math.max(1, SUMMARY_MAX_PIECES - modelPieces);
    if (queue.length <= allowed) return;
    const surplus = queue.splice(0, queue.length - allowed).flat();
    const offline = await createExtractiveSummarizer().summarize({
      messages: surplus,
      scope: "up_to",
      maxTokens: options.summaryMaxTokens,
      userMessagesCarried: true,
      ...(previous ? { previousSummary: previous } : {}),
    });
    previous = offline.text;
    pieces++;
  };
  await bound();
  while (queue.length > 0) {
    const piece = queue.shift()!;
    try {
      const result = await options.summarizer.summarize({
        messages: piece,
        // Every piece but the last is the older part of what the summary stands for.
        scope: queue.length > 0 ? "up_to" : scope,
        maxTokens: options.summaryMaxTokens,
        userMessagesCarried: true,
        ...(previous ? { previousSummary: previous } : {}),
        ...(options.instructions ? { instructions: options.instructions } : {}),
        ...(options.cacheSafe ? { cacheSafe: options.cacheSafe } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onKeepAlive ? { onKeepAlive: options.onKeepAlive } : {}),
      });
      text = result.text;
      previous = result.text;
      pieces++;
      modelPieces++;
      usage.calls += result.calls;
      usage.inputTokens += result.inputTokens;
      usage.outputTokens += result.outputTokens;
    } catch (error) {
      if (!(error instanceof PromptTooLongError)) throw error;
      if (ptlRetries >= MAX_PTL_RETRIES) {
        throw new CompactionFailedError(
          "summary",
          `The summary request was still too long for the model after ${MAX_PTL_RETRIES} retries that split it into smaller pieces; the conversation is unchanged. Compact with a smaller range or raise the model's window.`,
          { cause: error, reason: "too-long" },
        );
      }
      const size = estimateTokens(piece);
      const ratio =
        error.actualTokens !== undefined && error.limitTokens !== undefined && error.actualTokens > 0
          ? (error.limitTokens / error.actualTokens) * PTL_SPLIT_MARGIN
          : 0.5;
      maxTokens = Math.max(1, Math.floor(Math.min(maxTokens, size) * ratio));
      const rest = [piece, ...queue];
      queue = splitIntoPieces(rest.flat(), maxTokens);
      if (queue[0]!.length >= piece.length) {
        throw new CompactionFailedError(
          "summary",
          "The summary request is too long for the model even with a single round in it; the conversation is unchanged.",
          { cause: error, reason: "too-long" },
        );
      }
      ptlRetries++;
      await bound();
    }
  }
  return { text, ...usage, ptlRetries, pieces };
}

/**
 * Whole API rounds (so no tool pair is split), oldest first, grouped into pieces of at most `maxTokens` each
 * (a round larger than that is a piece of its own).
 */
function splitIntoPieces(messages: readonly Message[], maxTokens: number): Message[][] {
  if (estimateTokens(messages) <= maxTokens) return [[...messages]];
  const pieces: Message[][] = [];
  let current: Message[] = [];
  let tokens = 0;
  for (const group of groupByApiRound(messages)) {
    const size = estimateTokens(group.messages);
    if (current.length > 0 && tokens + size > maxTokens) {
      pieces.push(current);
      current = [];
      tokens = 0;
    }
    current.push(...group.messages);
    tokens += size;
  }
  if (current.length > 0) pieces.push(current);
  return pieces;
}

function split(
  messages: readonly Message[],
  options: CompactConversationOptions,
  bodyStart: number,
  latest: number,
): { head: Message[]; summarized: Message[]; tail: Message[]; scope: SummaryScope } {
  const keepStart = (from: number) => {
    const floor = Math.max(from, options.keep?.floor ?? 0);
    const start = calculateKeepStart(messages, {
      minTokens: 0,
      minTextMessages: 1,
      maxTokens: SUMMARY_KEEP_TOKENS,
      ...options.keep,
      floor,
      from: latest,
    });
    // When the tail would swallow everything (the only text message opens the range), keep the newest round only.
    return start > floor
      ? start
      : calculateKeepStart(messages, { minTokens: 0, minTextMessages: 0, maxTokens: 0, floor, from: latest });
  };
  const range = options.range;
  if (range && "upTo" in range) {
    const cut = Math.max(bodyStart, Math.min(range.upTo, latest, messages.length));
    const start = calculateKeepStart(messages, {
      minTokens: 0,
      minTextMessages: 0,
      maxTokens: 0,
      from: cut,
      floor: bodyStart,
    });
    return {
      head: [],
      summarized: messages.slice(bodyStart, start),
      tail: messages.slice(start),
      scope: "up_to",
    };
  }
  if (range && "from" in range) {
    const from = Math.max(bodyStart, Math.min(range.from, messages.length));
    const start = keepStart(from);
    return {
      head: messages.slice(0, from),
      summarized: messages.slice(from, start),
      tail: messages.slice(start),
      scope: "from",
    };
  }
  const start = keepStart(bodyStart);
  return {
    head: [],
    summarized: messages.slice(bodyStart, start),
    tail: messages.slice(start),
    scope: "all",
  };
}

/** Media become `[image]` / `[document]` (also inside tool results); re-injected attachments are left out. */
export function prepareForSummary(
  messages: readonly Message[],
  reinjected: ReadonlySet<string> | "all",
): Message[] {
  const prepared: Message[] = [];
  for (const message of messages) {
    const attachment = message.metadata?.attachment;
    if (typeof attachment === "string" && (reinjected === "all" || reinjected.has(attachment))) continue;
    let changed = false;
    const content = message.content.map((block): ContentBlock => {
      const replaced = withoutMedia(block);
      if (replaced !== block) changed = true;
      return replaced;
    });
    prepared.push(changed ? { ...message, content } : message);
  }
  return prepared;
}

function withoutMedia(block: ContentBlock): ContentBlock {
  if (block.type === "image" || block.type === "document") return { type: "text", text: `[${block.type}]` };
  if (block.type !== "tool_result" || typeof block.content === "string") return block;
  if (!block.content.some((part) => part.type !== "text")) return block;
  const replaced: ToolResultBlock = {
    ...block,
    content: block.content.map((part) =>
      part.type === "text" ? part : { type: "text", text: `[${part.type}]` },
    ),
  };
  return replaced;
}

/**
 * A reactive summary keeps the last messages, unless they alone are over the size the request must get under:
 * then only the newest tool round stays.
 */
function reactiveRange(messages: readonly Message[], context: LadderState): CompactRange {
  const keepFrom = Math.max(0, messages.length - REACTIVE_KEEP_MESSAGES);
  const tail = estimateTokens(messages.slice(keepFrom));
  return { upTo: tail > messagesTarget(messages, context) ? messages.length : keepFrom };
}

export interface SummaryLayerOptions {
  /** The verbatim tail: default one text message, at most 8,000 tokens scaled to the window, and the newest tool round. */
  keep?: KeepWindowOptions;
}

/**
 * The summary as a layer: at the threshold, when asked for, and in `recover` (all but the last messages),
 * the summariser the pipeline chose writes the nine sections for the older messages. It can run in the
 * background on a snapshot, and is spliced in at the threshold.
 */
export function createSummaryLayer(options: SummaryLayerOptions = {}): SummaryLayer {
  return defineLayer({
    name: "summary",
    label: "Summary",
    color: "#ea580c",
    kind: "summary",
    background: true,
    due: (state) => summaryDue(state, true),
    run(messages, context) {
      const scale = scaleFor(context.threshold);
      const range =
        context.request?.range ??
        (context.trigger === "reactive" ? reactiveRange(messages, context) : undefined);
      return compactConversation(messages, {
        summarizer: context.summarizer,
        ...(context.summarizer.boundedByModelWindow ? { maxInputTokens: context.maxInputTokens } : {}),
        userMessageBudgetTokens: userMessageBudget(context.summaryMaxTokens),
        ...(context.sessionDir ? { sessionDir: context.sessionDir } : {}),
        trigger: context.trigger,
        summaryMaxTokens: context.summaryMaxTokens,
        continuation: context.continuation,
        keep: {
          minTokens: 0,
          maxTokens: Math.max(SUMMARY_MIN_KEEP_TOKENS, Math.round(SUMMARY_KEEP_TOKENS * scale)),
          minTextMessages: 1,
          ...options.keep,
        },
        now: context.now,
        ...(context.instructions ? { instructions: context.instructions } : {}),
        ...(range ? { range } : {}),
        ...(context.transcriptPath ? { transcriptPath: context.transcriptPath } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
        cacheSafe: context.cacheSafe,
        ...(context.onKeepAlive ? { onKeepAlive: context.onKeepAlive } : {}),
      });
    },
    describe(report) {
      const why = report.trigger === "reactive" ? " after the request overflowed the window" : "";
      return `Summarised ${plural(report.messagesSummarized ?? 0, "message")} by the ${report.summarizer ?? "extractive"} summariser${why}; kept ${plural(report.stats.kept ?? 0, "recent message")} verbatim.`;
    },
  });
}
