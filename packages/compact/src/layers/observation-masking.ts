import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import { estimateTextTokens } from "../conversation/conversation.ts";
import { MASK_KEEP_LAST } from "../defaults.ts";
import { describeOutcome, toolOutputRecord } from "../tool-outputs/tool-output-record.ts";
import {
  type ClearableOutput,
  collectClearableOutputs,
  isClearedResult,
  replaceOutputEdit,
  savedNote,
  type ToolResultOptions,
  toolResultContext,
} from "./clearable-outputs.ts";
import { defineLayer, type EditLayer, plural } from "./layer.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";
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
  const outputs: { edit: ContextEdit; tokens: number; stubTokens: number }[] = [];
  // Newest first: the first `keepLast` stay.
  const clearable = collectClearableOutputs(messages, options, isMasked).reverse();
  clearable.forEach((output, index) => {
    if (index < keepLast) return;
    const stub = maskedText(output, options);
    if (stub === undefined) return;
    outputs.push({
      edit: replaceOutputEdit(output, stub, "masked"),
      tokens: output.tokens,
      stubTokens: estimateTextTokens(stub),
    });
  });
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

/**
 * What a masked output says: an observation's outcome, or a tool result's record and where to get it back; undefined
 * for an output that must be saved first and could not be.
 */
function maskedText(output: ClearableOutput, options: ObservationMaskingOptions): string | undefined {
  if (output.toolUseId === undefined) return `${MASK_PREFIX} ${describeOutcome(output.text)}]`;
  const original = options.originalOutput?.(output.toolUseId) ?? output.text;
  const savedPath = output.save ? options.saveOutput?.(output.toolUseId, original) : undefined;
  if (output.save && savedPath === undefined) return undefined;
  const record = toolOutputRecord(output.use, original, output.isError, savedPath);
  return `${MASK_PREFIX} ${record}; ${savedPath === undefined ? "run it again" : "read it back from there"} if you need it.]`;
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
