import type {
  ContentBlock,
  ContextManagementConfig,
  ContextManagementEdit,
  Message,
  ModelProvider,
  Usage,
} from "@unforget/core";
import { InvalidOperationError } from "@unforget/core";
import {
  NATIVE_CLEAR_AT_LEAST_TOKENS,
  NATIVE_CLEAR_KEEP_TOOL_USES,
  NATIVE_CLEAR_TRIGGER_TOKENS,
  NATIVE_COMPACTION_TRIGGER_TOKENS,
  NATIVE_THINKING_IDLE_MS,
} from "../defaults.ts";

/** On-demand compaction instructions are limited to this many characters. */
export const ON_DEMAND_INSTRUCTIONS_MAX_CHARS = 16_384;

/** The instruction server compaction needs: with tools defined the model may call one and the block comes back empty. */
export const SERVER_COMPACTION_INSTRUCTIONS =
  "Summarise the conversation so far so that the work can continue from the summary alone: the user's requests and every message they wrote, decisions, files and code changed, errors and their fixes, pending tasks, the current work and the next step. Answer with text only and wrap it in <summary></summary>. Do not call any tool.";

export interface NativeContextOptions {
  /**
   * "context-editing": the provider clears old tool results (and old thinking after an idle hour) itself;
   * "server-compaction": the provider summarises past a token threshold; "off" (default).
   */
  mode: "off" | "context-editing" | "server-compaction";
  /** Input tokens at which the provider acts; default 180,000 (editing) or 150,000 (compaction), capped to the window. */
  triggerTokens?: number;
  keepToolUses?: number;
  clearAtLeastTokens?: number;
  /** Tools whose uses are never cleared. */
  excludeTools?: string[];
  /** Idle time after which old thinking is cleared; default one hour. */
  thinkingIdleMs?: number;
  /** Summary instructions for server compaction (they replace the provider's default prompt). */
  compactionInstructions?: string;
}

/** True when the provider can manage context itself (Anthropic's `context_management`). */
export function supportsNativeContext(provider: Pick<ModelProvider, "capabilities"> | undefined): boolean {
  return provider?.capabilities.nativeContextManagement === true;
}

/**
 * The `contextManagement` of a request under a native strategy, or undefined when there is none: clearing
 * of old thinking first (only after an idle gap; during active use every thinking turn is kept), then clearing
 * of old tool uses; or threshold compaction with instructions that forbid tool calls.
 */
export function buildContextManagement(
  options: NativeContextOptions,
  state: { idleMs: number; contextWindow: number; hasThinking: boolean },
): ContextManagementConfig | undefined {
  if (options.mode === "off") return undefined;
  const cap = (value: number) => Math.max(1, Math.min(value, Math.floor(state.contextWindow * 0.9)));
  if (options.mode === "server-compaction") {
    return {
      edits: [
        {
          type: "compact_20260112",
          trigger: {
            type: "input_tokens",
            value: Math.max(50_000, cap(options.triggerTokens ?? NATIVE_COMPACTION_TRIGGER_TOKENS)),
          },
          instructions: options.compactionInstructions ?? SERVER_COMPACTION_INSTRUCTIONS,
        },
      ],
    };
  }
  const edits: ContextManagementEdit[] = [];
  if (state.hasThinking && state.idleMs > (options.thinkingIdleMs ?? NATIVE_THINKING_IDLE_MS)) {
    edits.push({ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } });
  }
  const clear: ContextManagementEdit = {
    type: "clear_tool_uses_20250919",
    trigger: { type: "input_tokens", value: cap(options.triggerTokens ?? NATIVE_CLEAR_TRIGGER_TOKENS) },
    keep: { type: "tool_uses", value: options.keepToolUses ?? NATIVE_CLEAR_KEEP_TOOL_USES },
    clearAtLeast: { type: "input_tokens", value: options.clearAtLeastTokens ?? NATIVE_CLEAR_AT_LEAST_TOKENS },
  };
  if (options.excludeTools?.length) clear.excludeTools = options.excludeTools;
  edits.push(clear);
  return { edits };
}

/** The provider options of an on-demand compaction request (Anthropic's top-level `compaction`). */
export function onDemandCompactionOptions(
  messages: readonly Message[],
  instructions = SERVER_COMPACTION_INSTRUCTIONS,
  contextManagement?: ContextManagementConfig,
): Record<string, Record<string, unknown>> {
  if (contextManagement && contextManagement.edits.length > 0) {
    throw new InvalidOperationError(
      "On-demand compaction cannot be combined with context management in the same request; send it without `contextManagement`.",
    );
  }
  if (hasOpenToolCall(messages)) {
    throw new InvalidOperationError(
      "On-demand compaction is refused while a tool call is open; send the tool result first, then compact.",
    );
  }
  if (instructions.length > ON_DEMAND_INSTRUCTIONS_MAX_CHARS) {
    throw new InvalidOperationError(
      `On-demand compaction instructions are limited to ${ON_DEMAND_INSTRUCTIONS_MAX_CHARS} characters (these have ${instructions.length}); shorten them.`,
    );
  }
  return { anthropic: { compaction: { type: "summarize", instructions }, betas: ["compact-2026-09-04"] } };
}

function hasOpenToolCall(messages: readonly Message[]): boolean {
  const last = messages[messages.length - 1];
  return last?.role === "assistant" && last.content.some((block) => block.type === "tool_use");
}

/** A provider's compaction block, read through a typed accessor. */
export interface ServerCompaction {
  /** The readable summary (null when the provider sent only encrypted content). */
  content: string | null;
  signature?: string;
  encryptedContent?: string;
}

/** The compaction block in a content block, if it is one (kept verbatim as an unknown block by core). */
export function getServerCompaction(block: ContentBlock): ServerCompaction | undefined {
  if (block.type !== "unknown" || block.original.type !== "compaction") return undefined;
  const original = block.original as Record<string, unknown>;
  const compaction: ServerCompaction = {
    content: typeof original.content === "string" ? original.content : null,
  };
  if (typeof original.signature === "string") compaction.signature = original.signature;
  if (typeof original.encrypted_content === "string")
    compaction.encryptedContent = original.encrypted_content;
  return compaction;
}

/**
 * The messages with every provider compaction block replaced by its readable text, so that a session
 * compacted by one provider can continue on another. Blocks without readable text say so.
 */
export function portableMessages(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    if (!message.content.some((block) => getServerCompaction(block) !== undefined)) return message;
    return {
      ...message,
      content: message.content.map((block): ContentBlock => {
        const compaction = getServerCompaction(block);
        if (!compaction) return block;
        return {
          type: "text",
          text:
            compaction.content === null
              ? "[The earlier conversation was compacted by the provider; its summary is not readable here.]"
              : `[Summary of the earlier conversation, written by the provider's compaction:]\n${compaction.content}`,
        };
      }),
    };
  });
}

/** Input tokens a response really cost: with server compaction the top-level usage leaves passes out, so sum them. */
export function billedInputTokens(usage: Usage): number {
  const passes = usage.iterations;
  if (passes && passes.length > 0) {
    return passes.reduce(
      (sum, pass) => sum + pass.inputTokens + pass.cacheCreationInputTokens + pass.cacheReadInputTokens,
      0,
    );
  }
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
}
