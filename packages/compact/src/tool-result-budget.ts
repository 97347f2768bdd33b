import type { Message, ToolResultBlock } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import { type CompactableTools, compactablePredicate } from "./compactable-tools.ts";
import { estimateTextTokens, indexToolUses, isTextResult, resultChars, resultText } from "./conversation.ts";
import { isoTime, type LayerResult, type LayerTimeOptions, resultFromEdits } from "./layer-result.ts";
import { truncateMiddle } from "./middle-out.ts";
import { persistedOutputMarker, persistedOutputPath, persistOutput } from "./persist-output.ts";

/** Per-message budget for tool results: above it the largest results go to disk first. */
export const DEFAULT_MAX_MESSAGE_RESULT_CHARS = 200_000;
/** Largest single tool result kept in the context as it is. */
export const DEFAULT_MAX_RESULT_CHARS = 50_000;
/** Characters of a persisted output left in the context as a preview. */
export const DEFAULT_PREVIEW_CHARS = 2_000;
/** Characters kept (head + tail) of a result cut in the middle: about 2,500 tokens. */
export const DEFAULT_TRUNCATE_CHARS = 10_000;

export interface ToolResultBudgetOptions extends LayerTimeOptions {
  /** Session folder: large outputs are saved to `<sessionDir>/tool-results/<tool_use_id>`. Without it they are cut in the middle instead. */
  sessionDir?: string;
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
  /** How a saved file's path is shown to the model; default the absolute path. */
  displayPath?: (absolutePath: string) => string;
  /** Only user messages at or after this index are looked at (the new ones); default 0. */
  fromIndex?: number;
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
 * in the middle instead (head and tail kept, the cut marked). Idempotent: a replaced result is under every
 * limit, so a second run changes nothing. A failed write falls back to the middle cut (reported in `stats`).
 */
export async function applyToolResultBudget(
  messages: readonly Message[],
  options: ToolResultBudgetOptions = {},
): Promise<LayerResult> {
  const maxMessageChars = options.maxMessageChars ?? DEFAULT_MAX_MESSAGE_RESULT_CHARS;
  const maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  const previewChars = Math.min(options.previewChars ?? DEFAULT_PREVIEW_CHARS, maxResultChars);
  const truncateChars = Math.min(options.truncateChars ?? DEFAULT_TRUNCATE_CHARS, maxResultChars);
  const truncates = options.truncateTools ? compactablePredicate(options.truncateTools) : () => false;
  // Tool names are needed only when something is over a limit: index the calls lazily.
  let calls: ReturnType<typeof indexToolUses> | undefined;
  const toolName = (id: string) => {
    calls ??= indexToolUses(messages);
    return calls.get(id)?.use.name ?? "";
  };
  const edits: ContextEdit[] = [];
  const stats = { persisted: 0, truncated: 0, persistFailed: 0 };
  let tokensFreed = 0;

  for (let index = Math.max(0, options.fromIndex ?? 0); index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== "user") continue;
    const candidates: Candidate[] = [];
    let total = 0;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const chars = resultChars(block);
      total += chars;
      if (isTextResult(block)) {
        candidates.push({ block, chars });
      }
    }
    if (candidates.length === 0) continue;
    candidates.sort((a, b) => b.chars - a.chars);
    for (const candidate of candidates) {
      if (candidate.chars <= maxResultChars && total <= maxMessageChars) break;
      const text = resultText(candidate.block);
      let replacement: string | undefined;
      let reason = "truncated";
      let path: string | undefined;
      if (options.sessionDir && !truncates(toolName(candidate.block.tool_use_id))) {
        path = persistedOutputPath(options.sessionDir, candidate.block.tool_use_id);
        try {
          await persistOutput(path, text);
          replacement = persistedOutputMarker(options.displayPath?.(path) ?? path, text, previewChars);
          reason = "persisted";
        } catch {
          stats.persistFailed++;
          path = undefined;
        }
      }
      replacement ??= truncateMiddle(text, truncateChars);
      if (replacement.length >= text.length) continue;
      const details: ContextEdit["details"] = { content: replacement, reason, originalChars: text.length };
      if (path !== undefined) details.path = path;
      edits.push({
        kind: "replace_tool_result",
        toolUseIds: [candidate.block.tool_use_id],
        details: details as { content: string; reason: string },
      });
      stats[reason === "persisted" ? "persisted" : "truncated"]++;
      tokensFreed += estimateTextTokens(text) - estimateTextTokens(replacement);
      total -= candidate.chars - replacement.length;
    }
  }
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, stats);
}
