import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import {
  estimateTextTokens,
  indexToolUses,
  isTextObservation,
  resultText,
  userText,
} from "../conversation/conversation.ts";
import { MASK_KEEP_LAST } from "../defaults.ts";
import { retentionLookup, withCompactableTools } from "../tool-outputs/compactable-tools.ts";
import { describeOutcome, toolOutputRecord } from "../tool-outputs/tool-output-record.ts";
import { defineLayer, type EditLayer, plural } from "./layer.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";
import { isClearedResult, savedNote, type ToolResultOptions, toolResultContext } from "./microcompact.ts";
import { withSavedOutputs } from "./saved-outputs.ts";

const MASK_PREFIX = "[Output omitted to save context:";

export interface ObservationMaskingOptions extends LayerTimeOptions, ToolResultOptions {
  /** Most recent outputs kept verbatim; default 10. */
  keepLast?: number;
  /** Mask nothing unless at least this many tokens go (each masking breaks the prompt cache); default 0. */
  minimumFreedTokens?: number;
}

/**
 * Keeps only the last `keepLast` tool outputs verbatim and turns every older one into a one-line record of its
 * original output: the call (command or path), its exit status and first error lines, and how large it was.
 * Outputs of tools that are not reproducible are masked only once saved (`saveOutput`), and the record says
 * where; those of tools that are kept never are. A published SWE-bench study found this matched LLM
 * summaries on task success at about half the cost; it needs no model call. Outputs already masked or
 * cleared are left alone, so running it again changes nothing.
 */
export function maskObservations(
  messages: readonly Message[],
  options: ObservationMaskingOptions = {},
): LayerResult {
  const keepLast = Math.max(0, options.keepLast ?? MASK_KEEP_LAST);
  const retention = withCompactableTools(options.retention ?? retentionLookup(), options.compactableTools);
  const calls = indexToolUses(messages);
  const outputs: { edit: ContextEdit; tokens: number; stubTokens: number }[] = [];
  let seen = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "user") continue;
    if (isTextObservation(message)) {
      const text = userText(message);
      if (isMasked(text)) continue;
      seen++;
      if (seen <= keepLast) continue;
      const stub = `${MASK_PREFIX} ${describeOutcome(text)}]`;
      outputs.push({
        edit: {
          kind: "replace_message",
          messageIds: [message.id],
          details: { content: stub, reason: "masked" },
        },
        tokens: estimateTextTokens(text),
        stubTokens: estimateTextTokens(stub),
      });
      continue;
    }
    for (let blockIndex = message.content.length - 1; blockIndex >= 0; blockIndex--) {
      const block = message.content[blockIndex]!;
      if (block.type !== "tool_result") continue;
      const call = calls.get(block.tool_use_id);
      if (!call) continue;
      const kind = retention(call.use.name);
      if (kind === "keep" || (kind === "persist" && !options.saveOutput)) continue;
      const text = resultText(block);
      if (isMasked(text)) continue;
      seen++;
      if (seen <= keepLast) continue;
      const original = options.originalOutput?.(block.tool_use_id) ?? text;
      const savedPath = kind === "persist" ? options.saveOutput?.(block.tool_use_id, original) : undefined;
      if (kind === "persist" && savedPath === undefined) continue;
      const record = toolOutputRecord(call.use, original, block.is_error === true, savedPath);
      const stub = `${MASK_PREFIX} ${record}; ${savedPath === undefined ? "run it again" : "read it back from there"} if you need it.]`;
      outputs.push({
        edit: {
          kind: "replace_tool_result",
          toolUseIds: [block.tool_use_id],
          details: { content: stub, reason: "masked" },
        },
        tokens: estimateTextTokens(text),
        stubTokens: estimateTextTokens(stub),
      });
    }
  }
  const worthIt = outputs.filter((output) => output.tokens > output.stubTokens);
  if (worthIt.length === 0) return unchanged(messages);
  const tokensFreed = worthIt.reduce((sum, output) => sum + output.tokens - output.stubTokens, 0);
  if (tokensFreed < (options.minimumFreedTokens ?? 0)) return unchanged(messages);
  return resultFromEdits(
    messages,
    worthIt.reverse().map((output) => output.edit),
    isoTime(options.now),
    tokensFreed,
    { masked: worthIt.length },
  );
}

function isMasked(text: string): boolean {
  return text.startsWith(MASK_PREFIX) || isClearedResult(text);
}

/** Observation masking as a layer (opt-in): in a batch of the cheap layers, while the context is above the target. */
export function createObservationMaskingLayer(
  options: Omit<ObservationMaskingOptions, "now" | "retention" | "saveOutput" | "originalOutput"> = {},
): EditLayer {
  return defineLayer({
    name: "observation-masking",
    label: "Observation masking",
    color: "#0d9488",
    kind: "edit",
    due: (state) =>
      state.trigger === "auto" && state.batch && state.tokens > state.target
        ? "context at the cheap-layer level"
        : false,
    run: (messages, context) =>
      withSavedOutputs(context, (saveOutput) =>
        maskObservations(messages, {
          minimumFreedTokens: context.minimumFreedTokens,
          ...options,
          now: context.now,
          ...toolResultContext(context, saveOutput),
        }),
      ),
    describe: (report) =>
      `Masked ${plural(report.stats.masked ?? 0, "old tool output")} as one-line records${savedNote(report.stats)}.`,
  });
}
