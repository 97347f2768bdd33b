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
  IDLE_GAP_MINUTES,
  KEEP_RECENT_RESULTS,
  PRUNE_MINIMUM_TOKENS,
  PRUNE_PROTECT_TOKENS,
  PRUNE_PROTECT_TURNS,
} from "../defaults.ts";
import {
  type CompactableTools,
  type RetentionLookup,
  retentionLookup,
  withCompactableTools,
} from "../tool-outputs/compactable-tools.ts";
import { toolOutputRecord } from "../tool-outputs/tool-output-record.ts";
import { defineLayer, type EditLayer, type LayerContext, plural } from "./layer.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  millis,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";
import { type SaveOutput, withSavedOutputs } from "./saved-outputs.ts";

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

export interface MicrocompactOptions extends LayerTimeOptions, ToolResultOptions {
  /**
   * Which path: "time" clears all but the most recent results after an idle gap (the cache is cold anyway);
   * "prune" clears old outputs beyond a protected recent window when that frees enough. Default "time".
   */
  strategy?: "time" | "prune";
  /** Time path: minutes since the last assistant message after which clearing happens; default 60. */
  idleGapMinutes?: number;
  /** Time path: results kept verbatim; default 5. */
  keepRecent?: number;
  /** Prune path: recent tool-output tokens never cleared; default 40,000. */
  protectTokens?: number;
  /** Prune path: user-role messages at the end (prompts or tool results) whose outputs are never cleared; default 2. */
  protectTurns?: number;
  /** Prune path: minimum tokens freed for the prune to happen; default 20,000. */
  minimumFreedTokens?: number;
  /**
   * Ids of messages that come from before the latest compact boundary (kept across it): their results are
   * stale and may be cleared whatever their recency.
   */
  staleMessageIds?: ReadonlySet<string>;
}

/** One clearable output: a tool result block or a whole observation message. */
interface Output {
  messageIndex: number;
  messageId: string;
  /** Set for a tool_result block; unset for an observation message. */
  toolUseId?: string;
  /** The call that produced it, when there is one. */
  use?: ToolUseBlock;
  text: string;
  isError: boolean;
  tokens: number;
  stale: boolean;
  /** Set when the output must be saved before it is cleared (its tool is not reproducible). */
  save?: boolean;
}

/**
 * Clears old tool outputs without a model call. The time path fires only after an idle gap longer than the
 * prompt cache lives (so nothing cached is lost) and keeps the most recent results; the prune path scans
 * back from the end, protects the latest outputs and the last user turns, and clears the rest only when
 * that frees enough to be worth a cache break. Results of reproducible tools (and observation messages) are
 * cleared; those of other tools only once saved (`saveOutput`), and never those of tools that are kept; results
 * already cleared are skipped. A cleared output keeps a one-line record of its original output: the call
 * (command or path), the exit status and the first error lines, and where it was saved. Records one edit per
 * cleared output.
 */
export function microcompact(messages: readonly Message[], options: MicrocompactOptions = {}): LayerResult {
  const strategy = options.strategy ?? "time";
  // The idle check is cheap and usually says no: make it before looking at any output.
  if (strategy === "time" && !idleGapPassed(messages, options)) return unchanged(messages);
  const outputs = collectOutputs(messages, options);
  if (outputs.length === 0) return unchanged(messages);
  const chosen =
    strategy === "time" ? chooseByIdleGap(outputs, options) : chooseByPrune(messages, outputs, options);
  if (chosen.length === 0) return unchanged(messages);
  const edits: ContextEdit[] = [];
  let tokensFreed = 0;
  for (const output of chosen) {
    const original =
      (output.toolUseId === undefined ? undefined : options.originalOutput?.(output.toolUseId)) ??
      output.text;
    let savedPath: string | undefined;
    if (output.save) {
      savedPath =
        output.toolUseId === undefined ? undefined : options.saveOutput?.(output.toolUseId, original);
      if (savedPath === undefined) continue;
    }
    const content = clearedResultText(
      toolOutputRecord(output.use, original, output.isError, savedPath),
      output.toolUseId,
    );
    const freed = output.tokens - estimateTextTokens(content);
    if (freed <= 0) continue;
    tokensFreed += freed;
    edits.push(
      output.toolUseId === undefined
        ? { kind: "replace_message", messageIds: [output.messageId], details: { content, reason: "cleared" } }
        : {
            kind: "replace_tool_result",
            toolUseIds: [output.toolUseId],
            details: { content, reason: "cleared" },
          },
    );
  }
  if (tokensFreed <= 0) return unchanged(messages);
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, { cleared: edits.length });
}

function collectOutputs(messages: readonly Message[], options: MicrocompactOptions): Output[] {
  const retention = withCompactableTools(options.retention ?? retentionLookup(), options.compactableTools);
  const calls = indexToolUses(messages);
  const stale = options.staleMessageIds;
  const outputs: Output[] = [];
  messages.forEach((message, messageIndex) => {
    if (message.role !== "user") return;
    if (isTextObservation(message)) {
      const text = userText(message);
      if (!isClearedResult(text)) {
        const action = messages[messageIndex - 1]?.metadata?.action;
        outputs.push({
          messageIndex,
          messageId: message.id,
          ...(typeof action === "string" ? { use: { name: "action", input: action } as ToolUseBlock } : {}),
          text,
          isError: false,
          tokens: estimateTextTokens(text),
          stale: stale?.has(message.id) ?? false,
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
      if (isClearedResult(text)) continue;
      outputs.push({
        ...(kind === "persist" ? { save: true } : {}),
        messageIndex,
        messageId: message.id,
        toolUseId: block.tool_use_id,
        use: call.use,
        text,
        isError: block.is_error === true,
        tokens: estimateTextTokens(text),
        stale: stale?.has(message.id) ?? false,
      });
    }
  });
  return outputs;
}

/** True when the last assistant message is older than the idle gap (the prompt cache has expired). */
function idleGapPassed(messages: readonly Message[], options: MicrocompactOptions): boolean {
  const gapMinutes = options.idleGapMinutes ?? IDLE_GAP_MINUTES;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "assistant") continue;
    const last = Date.parse(message.timestamp);
    return Number.isFinite(last) && (millis(options.now) - last) / 60_000 > gapMinutes;
  }
  return false;
}

function chooseByIdleGap(outputs: Output[], options: MicrocompactOptions): Output[] {
  const keep = Math.max(0, options.keepRecent ?? KEEP_RECENT_RESULTS);
  const fresh = outputs.filter((output) => !output.stale);
  const kept = new Set(fresh.slice(Math.max(0, fresh.length - keep)));
  return outputs.filter((output) => !kept.has(output));
}

function chooseByPrune(
  messages: readonly Message[],
  outputs: Output[],
  options: MicrocompactOptions,
): Output[] {
  const protectTokens = options.protectTokens ?? PRUNE_PROTECT_TOKENS;
  const protectTurns = options.protectTurns ?? PRUNE_PROTECT_TURNS;
  const minimum = options.minimumFreedTokens ?? PRUNE_MINIMUM_TOKENS;
  // The first of the protected user-role messages: outputs from there on are never cleared.
  let turns = 0;
  let protectedFrom = messages.length;
  for (let index = messages.length - 1; index >= 0 && turns < protectTurns; index--) {
    const message = messages[index]!;
    if (message.role === "user" && !message.isMeta) turns++;
    protectedFrom = index;
  }
  const chosen: Output[] = [];
  let seen = 0;
  let freed = 0;
  for (let index = outputs.length - 1; index >= 0; index--) {
    const output = outputs[index]!;
    if (output.stale) {
      chosen.push(output);
      freed += output.tokens;
      continue;
    }
    if (output.messageIndex >= protectedFrom) continue;
    seen += output.tokens;
    if (seen > protectTokens) {
      chosen.push(output);
      freed += output.tokens;
    }
  }
  return freed >= minimum ? chosen.reverse() : [];
}

export interface MicrocompactLayerOptions
  extends Omit<
    MicrocompactOptions,
    | "now"
    | "strategy"
    | "staleMessageIds"
    | "minimumFreedTokens"
    | "retention"
    | "saveOutput"
    | "originalOutput"
  > {
  /** Prune: the fewest tokens a prune must free; default 20,000 scaled to the window. */
  minimumFreedTokens?: number;
}

/**
 * Microcompact as a layer: after an idle gap longer than the prompt cache lives it clears all but the most
 * recent outputs (the cache is cold, so this costs nothing); in a batch of the cheap layers it prunes old
 * outputs beyond the most recent 40,000 tokens (scaled to the window).
 */
export function createMicrocompactLayer(options: MicrocompactLayerOptions = {}): EditLayer {
  const gapMs = (options.idleGapMinutes ?? IDLE_GAP_MINUTES) * 60_000;
  return defineLayer({
    name: "microcompact",
    label: "Microcompact",
    color: "#16a34a",
    kind: "edit",
    due(state) {
      if (state.trigger !== "auto") return false;
      if (state.idleMs > gapMs) return "idle longer than the prompt cache lives";
      return state.batch ? "context at the cheap-layer level" : false;
    },
    run(messages, context) {
      const idle = context.idleMs > gapMs;
      return withSavedOutputs(context, (saveOutput) =>
        microcompact(messages, {
          protectTokens: Math.round(PRUNE_PROTECT_TOKENS * context.scale),
          ...options,
          minimumFreedTokens: options.minimumFreedTokens ?? Math.round(PRUNE_MINIMUM_TOKENS * context.scale),
          strategy: idle ? "time" : "prune",
          now: context.now,
          staleMessageIds: context.staleMessageIds,
          ...toolResultContext(context, saveOutput),
        }),
      );
    },
    describe: (report) =>
      `Cleared ${plural(report.stats.cleared ?? 0, "old tool result")}${savedNote(report.stats)}: ${report.reason}.`,
  });
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
