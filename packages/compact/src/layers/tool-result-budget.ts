import type { Message, ToolResultBlock } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import {
  estimateTextTokens,
  indexToolUses,
  isTextResult,
  isUserAuthored,
  resultChars,
  resultText,
  userText,
} from "../conversation/conversation.ts";
import {
  CHARS_PER_TOKEN,
  MAX_MESSAGE_RESULT_CHARS,
  MAX_RESULT_CHARS,
  MESSAGE_RESULT_SHARE,
  MIN_RESULT_CHARS,
  PREVIEW_CHARS,
  RESULT_CAP_CHARS,
  RESULT_SHARE,
  TRUNCATE_CHARS,
  USER_MESSAGE_SHARE,
} from "../defaults.ts";
import { type CompactableTools, compactablePredicate } from "../tool-outputs/compactable-tools.ts";
import { truncateMiddle } from "../tool-outputs/middle-out.ts";
import { persistedOutputMarker, persistedOutputPath, persistOutput } from "../tool-outputs/persist-output.ts";
import { findErrorLines } from "../tool-outputs/tool-output-record.ts";
import { defineLayer, type EditLayer, plural } from "./layer.ts";
import { isoTime, type LayerResult, type LayerTimeOptions, resultFromEdits } from "./layer-result.ts";

export interface ToolResultBudgetOptions extends LayerTimeOptions {
  /** Session folder: large outputs are saved to `<sessionDir>/tool-results/<tool_use_id>`. Without it they are cut in the middle instead. */
  sessionDir?: string;
  /** Writes a saved output (default `persistOutput`: atomic, durable); the ladder's awaits a write already running. */
  persistOutput?: (path: string, text: string) => Promise<void>;
  /** Most characters of tool results one user message may carry; default 200,000. */
  maxMessageChars?: number;
  /** Most characters one tool result may keep in the context; default 50,000. */
  maxResultChars?: number;
  /** Characters of a persisted output previewed in the context; default 2,000. */
  previewChars?: number;
  /** Tools whose output is not worth keeping on disk: cut in the middle instead of persisted. Default none. */
  truncateTools?: CompactableTools;
  /** Characters a middle-cut result keeps (head + tail); default 10,000 (about 2,500 tokens). */
  truncateChars?: number;
  /**
   * A result over this many characters (and within `maxResultChars`) is cut in the middle to it, head, tail
   * and its first error line kept; the transcript keeps it whole. Default none (only `maxResultChars` applies).
   */
  capChars?: number;
  /** How a saved file's path is shown to the model; default the absolute path. */
  displayPath?: (absolutePath: string) => string;
  /** Only user messages at or after this index are looked at (the new ones); default 0. */
  fromIndex?: number;
  /**
   * Longest message the user wrote (text only) kept whole; a longer one is cut in the middle (the transcript
   * keeps it whole). Default: none is cut.
   */
  maxUserMessageChars?: number;
}

interface Candidate {
  block: ToolResultBlock;
  chars: number;
}

/**
 * The first and cheapest layer. In each user message, a tool result over `maxResultChars` is saved to disk
 * (atomically, before anything points at it) and replaced by a `<persisted-output>` marker with its path,
 * size, a preview and how to read the rest; when the results of one message still exceed `maxMessageChars`,
 * the largest go next. Results of `truncateTools`, and every result when there is no session folder, are cut
 * in the middle instead (head and tail kept, the cut marked). A message the user wrote that is longer than
 * `maxUserMessageChars` is cut in the middle too. This is the one layer that may cut the newest turn (in the
 * middle, never away). Idempotent: a replaced result is under every limit, so a second run changes nothing.
 * A failed write falls back to the middle cut (reported in `stats`).
 */
export async function applyToolResultBudget(
  messages: readonly Message[],
  options: ToolResultBudgetOptions = {},
): Promise<LayerResult> {
  const maxMessageChars = options.maxMessageChars ?? MAX_MESSAGE_RESULT_CHARS;
  const maxResultChars = options.maxResultChars ?? MAX_RESULT_CHARS;
  const previewChars = Math.min(options.previewChars ?? PREVIEW_CHARS, maxResultChars);
  const capChars = options.capChars !== undefined ? Math.min(options.capChars, maxResultChars) : undefined;
  const truncateChars = Math.min(options.truncateChars ?? TRUNCATE_CHARS, capChars ?? maxResultChars);
  const truncates = options.truncateTools ? compactablePredicate(options.truncateTools) : () => false;
  // Tool names are needed only when something is over a limit: index the calls lazily.
  let calls: ReturnType<typeof indexToolUses> | undefined;
  const toolName = (id: string) => {
    calls ??= indexToolUses(messages);
    return calls.get(id)?.use.name ?? "";
  };
  const run: BudgetRun = {
    edits: [],
    stats: { persisted: 0, truncated: 0, persistFailed: 0, userCut: 0 },
    tokensFreed: 0,
    limits: { maxMessageChars, maxResultChars, previewChars, capChars, truncateChars },
    truncates,
    toolName,
    options,
  };
  // The results of one round (every result after an assistant message, in one message or several) share the
  // message's limit: K parallel calls' outputs together keep the room of one message, however they arrive.
  let round: Candidate[] = [];
  let total = 0;
  for (let index = Math.max(0, options.fromIndex ?? 0); index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== "user") {
      await budgetRound(run, round, total);
      round = [];
      total = 0;
      continue;
    }
    const userCut = cutUserMessage(message, options.maxUserMessageChars);
    if (userCut) {
      run.edits.push(userCut.edit);
      run.tokensFreed += userCut.freed;
      run.stats.userCut++;
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const chars = resultChars(block);
      total += chars;
      // A result already saved or cut stays as it is (saving a marker would overwrite the saved output).
      if (isTextResult(block) && !isBudgeted(resultText(block))) round.push({ block, chars });
    }
  }
  await budgetRound(run, round, total);
  const { edits, stats, tokensFreed } = run;
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, stats, {
    newestTurn: "may-cut",
  });
}

interface BudgetRun {
  edits: ContextEdit[];
  stats: { persisted: number; truncated: number; persistFailed: number; userCut: number };
  tokensFreed: number;
  limits: {
    maxMessageChars: number;
    maxResultChars: number;
    previewChars: number;
    capChars: number | undefined;
    truncateChars: number;
  };
  truncates: (toolName: string) => boolean;
  toolName: (id: string) => string;
  options: ToolResultBudgetOptions;
}

/** One round's results within the limits: the largest first, saved (or cut) until the rest fits. */
async function budgetRound(run: BudgetRun, round: readonly Candidate[], roundChars: number): Promise<void> {
  if (round.length === 0) return;
  const { maxMessageChars, maxResultChars, previewChars, capChars, truncateChars } = run.limits;
  const { options, truncates, toolName } = run;
  const candidates = [...round].sort((a, b) => b.chars - a.chars);
  let total = roundChars;
  for (const candidate of candidates) {
    const overCap = capChars !== undefined && candidate.chars > capChars;
    if (candidate.chars <= maxResultChars && total <= maxMessageChars && !overCap) break;
    const text = resultText(candidate.block);
    let replacement: string | undefined;
    let reason = "truncated";
    let path: string | undefined;
    const persist = candidate.chars > maxResultChars || total > maxMessageChars;
    if (persist && options.sessionDir && !truncates(toolName(candidate.block.tool_use_id))) {
      path = persistedOutputPath(options.sessionDir, candidate.block.tool_use_id);
      try {
        await (options.persistOutput ?? persistOutput)(path, text);
        replacement = persistedOutputMarker(options.displayPath?.(path) ?? path, text, previewChars);
        reason = "persisted";
      } catch {
        run.stats.persistFailed++;
        path = undefined;
      }
    }
    // Over the round's limit with nowhere to save it: each result keeps its share of the limit (cap × K ≤ limit).
    const share =
      total > maxMessageChars
        ? Math.max(PREVIEW_CHARS, Math.floor(maxMessageChars / round.length))
        : truncateChars;
    replacement ??= cutKeepingFirstError(text, Math.min(truncateChars, share));
    if (replacement.length >= text.length) continue;
    const details: ContextEdit["details"] = { content: replacement, reason, originalChars: text.length };
    if (path !== undefined) details.path = path;
    run.edits.push({
      kind: "replace_tool_result",
      toolUseIds: [candidate.block.tool_use_id],
      details: details as { content: string; reason: string },
    });
    run.stats[reason === "persisted" ? "persisted" : "truncated"]++;
    run.tokensFreed += estimateTextTokens(text) - estimateTextTokens(replacement);
    total -= candidate.chars - replacement.length;
  }
}

/**
 * The middle cut of a result, with its first error line after the cut marker when the cut removed it (so that
 * an error printed in the middle of a long log survives).
 */
function cutKeepingFirstError(text: string, maxChars: number): string {
  const plain = truncateMiddle(text, maxChars);
  const error = findErrorLines(text, 1)[0];
  if (error === undefined || plain.includes(error)) return plain;
  const note = `[first error line, from the part cut: ${error}]\n`;
  const cut = truncateMiddle(text, Math.max(0, maxChars - note.length));
  const marker = MIDDLE_CUT.exec(cut);
  if (!marker) return plain;
  const at = marker.index + marker[0].length;
  return `${cut.slice(0, at)}${note}${cut.slice(at)}`;
}

/** True for a result this layer already replaced: a persisted-output marker or a middle cut. */
function isBudgeted(text: string): boolean {
  return text.startsWith("<persisted-output ") || MIDDLE_CUT.test(text);
}

const MIDDLE_CUT = /\n\[… [\d,]+ characters(?: \([\d,]+ lines\))? cut from the middle …\]\n/;

/** A message the user typed (text only) over the limit, cut in the middle. */
function cutUserMessage(
  message: Message,
  maxChars: number | undefined,
): { edit: ContextEdit; freed: number } | undefined {
  if (maxChars === undefined || !isUserAuthored(message)) return undefined;
  if (!message.content.every((block) => block.type === "text")) return undefined;
  const text = userText(message);
  if (text.length <= maxChars) return undefined;
  const content = truncateMiddle(text, maxChars);
  if (content.length >= text.length) return undefined;
  return {
    edit: {
      kind: "replace_message",
      messageIds: [message.id],
      details: { content, reason: "truncated", originalChars: text.length } as {
        content: string;
        reason: string;
      },
    },
    freed: estimateTextTokens(text) - estimateTextTokens(content),
  };
}

export interface ToolResultBudgetLayerOptions
  extends Omit<
    ToolResultBudgetOptions,
    "now" | "fromIndex" | "sessionDir" | "persistOutput" | "maxUserMessageChars"
  > {}

/**
 * The tool-result budget as the ladder's first layer: due whenever a call adds messages, it looks at the new
 * ones only. Its limits scale with the threshold (15 % per result, 40 % per message, 50 % for a message the
 * user wrote, as characters at four per token), within the fixed caps.
 */
export function createToolResultBudgetLayer(options: ToolResultBudgetLayerOptions = {}): EditLayer {
  return defineLayer({
    name: "tool-result-budget",
    label: "Tool-result budget",
    color: "#0891b2",
    kind: "edit",
    cutsNewestTurn: true,
    due: (state) => (state.trigger === "auto" && state.added > 0 ? "large tool output" : false),
    run(messages, context) {
      const chars = (share: number) => Math.floor(context.threshold * share * CHARS_PER_TOKEN);
      const maxResultChars =
        options.maxResultChars ?? Math.max(MIN_RESULT_CHARS, Math.min(MAX_RESULT_CHARS, chars(RESULT_SHARE)));
      return applyToolResultBudget(messages, {
        ...options,
        maxResultChars,
        capChars: options.capChars ?? RESULT_CAP_CHARS,
        maxMessageChars:
          options.maxMessageChars ??
          Math.max(maxResultChars, Math.min(MAX_MESSAGE_RESULT_CHARS, chars(MESSAGE_RESULT_SHARE))),
        maxUserMessageChars: Math.max(maxResultChars, chars(USER_MESSAGE_SHARE)),
        previewChars: Math.min(options.previewChars ?? PREVIEW_CHARS, Math.floor(maxResultChars / 2)),
        fromIndex: context.firstNew,
        now: context.now,
        ...(context.sessionDir ? { sessionDir: context.sessionDir } : {}),
        ...(context.persistOutput ? { persistOutput: context.persistOutput } : {}),
      });
    },
    describe(report) {
      const parts: string[] = [];
      if (report.stats.persisted)
        parts.push(`saved ${plural(report.stats.persisted, "large tool output")} to disk`);
      if (report.stats.truncated)
        parts.push(`cut ${plural(report.stats.truncated, "large tool output")} in the middle`);
      if (report.stats.userCut)
        parts.push(`cut ${plural(report.stats.userCut, "long user message")} in the middle`);
      const text = parts.join(" and ") || "trimmed large tool outputs";
      return `${text.charAt(0).toUpperCase()}${text.slice(1)} (head and tail kept).`;
    },
  });
}
