import type { Message, ToolUseBlock } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import {
  estimateTextTokens,
  indexToolUses,
  isTextObservation,
  resultText,
  userText,
} from "../conversation/conversation.ts";
import {
  type CompactableTools,
  type RetentionLookup,
  retentionLookup,
  withCompactableTools,
} from "../tool-outputs/compactable-tools.ts";
import { type LayerContext, plural } from "./layer.ts";
import type { SaveOutput } from "./saved-outputs.ts";

/** How a cleared output starts; the rest is its one-line record (call, exit status, first error lines). */
export const CLEARED_RESULT_PREFIX = "[Old tool result content cleared";

/**
 * What a cleared output says instead of its content: the prefix, the id history_read restores it by (its tool_use
 * id, when it has one) and its record.
 */
export function clearedResultText(record: string, historyId?: string): string {
  return `${CLEARED_RESULT_PREFIX}${historyId === undefined ? "" : ` (history_read id ${historyId})`}: ${record}]`;
}

/** The record a cleared output carries (what `clearedResultText` was given), or undefined for another text. */
export function clearedRecord(text: string): string | undefined {
  if (!isClearedResult(text) || !text.endsWith("]")) return undefined;
  const start = text.indexOf(": ", CLEARED_RESULT_PREFIX.length);
  return start === -1 ? undefined : text.slice(start + 2, -1);
}

/** True for an output a layer has already cleared. */
export function isClearedResult(text: string): boolean {
  return text.startsWith(CLEARED_RESULT_PREFIX);
}

/** What the cheap layers need to know about tool results: what each tool's may become, and what they were. */
export interface ToolResultOptions {
  /**
   * What each tool's old results may become (core's `ToolResultRetention`); default `retentionLookup()`: the
   * well-known names of `DEFAULT_COMPACTABLE_TOOLS` are reproducible, every other tool "persist".
   */
  retention?: RetentionLookup;
  /**
   * Tools whose results count as reproducible, over `retention`; the others do not (their results are saved
   * before they are cleared). Observation messages always may be cleared.
   */
  compactableTools?: CompactableTools;
  /**
   * Called for a result of a tool that is not reproducible before it is cleared: where its output is saved (the
   * record points there), or undefined to keep it. Without it such results are kept.
   */
  saveOutput?: SaveOutput;
  /** The output a tool result held when it arrived (before a layer cleared, cut or saved it): records describe it. */
  originalOutput?: (toolUseId: string) => string | undefined;
}

/** One output a cheap layer may replace: a tool result block or a whole observation message. */
export interface ClearableOutput {
  messageIndex: number;
  messageId: string;
  /** Set for a tool_result block; unset for an observation message. */
  toolUseId?: string;
  /** The call that produced it, when there is one (an observation's action is its call). */
  use?: Pick<ToolUseBlock, "name" | "input">;
  text: string;
  isError: boolean;
  tokens: number;
  /** Set when the output must be saved before it is replaced (its tool is not reproducible). */
  save?: boolean;
}

/** Each output's estimate, by the block (or observation message) that holds it: blocks are never changed in place. */
const outputTokens = new WeakMap<object, number>();

function textTokensOf(holder: object, text: string): number {
  let tokens = outputTokens.get(holder);
  if (tokens === undefined) {
    tokens = estimateTextTokens(text);
    outputTokens.set(holder, tokens);
  }
  return tokens;
}

/**
 * The outputs a cheap layer may replace, oldest first: every observation message, and every tool result whose
 * tool lets it go (never one of a tool that is kept; one of a tool that is not reproducible only with
 * `saveOutput`, marked `save`). Outputs `replaced` says a layer already replaced are left out.
 */
export function collectClearableOutputs(
  messages: readonly Message[],
  options: ToolResultOptions,
  replaced: (text: string) => boolean,
): ClearableOutput[] {
  const retention = withCompactableTools(options.retention ?? retentionLookup(), options.compactableTools);
  const calls = indexToolUses(messages);
  const outputs: ClearableOutput[] = [];
  messages.forEach((message, messageIndex) => {
    if (message.role !== "user") return;
    if (isTextObservation(message)) {
      const text = userText(message);
      if (!replaced(text)) {
        const action = messages[messageIndex - 1]?.metadata?.action;
        outputs.push({
          messageIndex,
          messageId: message.id,
          ...(typeof action === "string" ? { use: { name: "action", input: action } } : {}),
          text,
          isError: false,
          tokens: textTokensOf(message, text),
        });
      }
      return;
    }
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const call = calls.get(block.tool_use_id);
      if (!call) continue;
      const kind = retention(call.use.name);
      if (kind === "keep" || (kind === "persist" && !options.saveOutput)) continue;
      const text = resultText(block);
      if (replaced(text)) continue;
      outputs.push({
        ...(kind === "persist" ? { save: true } : {}),
        messageIndex,
        messageId: message.id,
        toolUseId: block.tool_use_id,
        use: call.use,
        text,
        isError: block.is_error === true,
        tokens: textTokensOf(block, text),
      });
    }
  });
  return outputs;
}

/** The edit that replaces an output's content: its tool result, or the whole observation message. */
export function replaceOutputEdit(
  output: Pick<ClearableOutput, "messageId" | "toolUseId">,
  content: string,
  reason: string,
): ContextEdit {
  return output.toolUseId === undefined
    ? { kind: "replace_message", messageIds: [output.messageId], details: { content, reason } }
    : { kind: "replace_tool_result", toolUseIds: [output.toolUseId], details: { content, reason } };
}

/** The tool-result options of a layer's run: the session's retention, the saver, the original outputs. */
export function toolResultContext(
  context: Pick<LayerContext, "retention" | "originalOutput">,
  saveOutput: SaveOutput | undefined,
): Pick<ToolResultOptions, "retention" | "saveOutput" | "originalOutput"> {
  return {
    ...(context.retention ? { retention: context.retention } : {}),
    ...(saveOutput ? { saveOutput } : {}),
    ...(context.originalOutput ? { originalOutput: context.originalOutput } : {}),
  };
}

/** How many outputs a layer saved to the session folder before it cleared them, for its report sentence. */
export function savedNote(stats: Readonly<Record<string, number>>): string {
  return stats.saved ? ` (${plural(stats.saved, "output")} saved to the session folder first)` : "";
}
