import type { Attachment } from "@unforget/core";
import type { CompactTrigger } from "@unforget/transcript";

/** Fields every event carries so a plugin can tell which session (and transcript) it is looking at. */
export interface SessionEventBase {
  /** The session the event belongs to. */
  sessionId: string;
  /** Id (or path) of the session's transcript, when the caller knows it. */
  transcriptId?: string;
}

/** Fired before a compaction summarises history. */
export interface PreCompactEvent extends SessionEventBase {
  /** "manual" (the user asked), "auto" (the threshold was crossed) or "reactive" (after a prompt-too-long error). */
  trigger: CompactTrigger;
  /** Context size in tokens when the compaction was decided. */
  tokens: number;
  /** The threshold that was crossed, in tokens (for a manual compaction: the threshold in force). */
  threshold: number;
}

/** A refusal to let a proactive compaction (or a tool call) go ahead. */
export interface HookVeto {
  /** Shown to the user: why the compaction did not happen. */
  reason: string;
  /** Name of the plugin (or hook command) that vetoed; filled in by the bus when a plugin leaves it out. */
  by?: string;
}

/** The value the `preCompact` waterfall passes from tap to tap. */
export interface PreCompactResult {
  /**
   * Summary instructions so far: the user's first, each plugin's appended after them. A tap must return them
   * starting with what it received; otherwise the bus keeps what it received, appends the tap's new text and
   * reports the plugin.
   */
  instructions: string;
  /**
   * Set by the bus on the value each tap receives: the user's own instructions, as the app passed them in
   * `instructions`, whatever earlier taps did (command hooks send it as `custom_instructions`). Ignored in
   * what a tap returns, and not part of the fired result.
   */
  userInstructions?: string;
  /** Set to refuse a manual or auto compaction. Ignored (and reported) for a reactive one. */
  veto?: HookVeto;
  /**
   * Message ids (or tool_use ids) to pin before this compaction: kept verbatim by it and every later one, as the
   * user's `/pin` does, within the pins' cap (a pin past it is refused and reported, the compaction goes on).
   * Pins only accumulate: a tap returns the ones it received plus its own, and the bus keeps both either way.
   */
  pin?: string[];
}

/**
 * Fired after any compaction layer has shrunk the context: the cheap ones that clear or persist content
 * ("tool-result-budget", "snip", "microcompact", "collapse") and the ones that summarise ("session-memory",
 * "summary" — reactive when `trigger` is "reactive" — and "provider").
 */
export interface PostCompactEvent extends SessionEventBase {
  /** The layer that ran ("tool-result-budget", "snip", "microcompact", "collapse", "session-memory", "summary", …). */
  layer: string;
  trigger: CompactTrigger;
  /** Context size in tokens before the layer ran. */
  tokensBefore: number;
  /** Context size in tokens after it ran. */
  tokensAfter: number;
  /** The summary text that now stands for the summarised messages; only for layers that write one. */
  summary?: string;
  /** How many messages the summary replaced; only for layers that write a summary. */
  messagesSummarized?: number;
}

/** Why a session (re)started: the first turn, a resumed transcript, a cleared context, or after a compaction. */
export type SessionStartSource = "startup" | "resume" | "clear" | "compact";

export interface SessionStartEvent extends SessionEventBase {
  source: SessionStartSource;
}

/** Why a session ended ("clear", "logout", "prompt_input_exit", "other", …). */
export interface SessionEndEvent extends SessionEventBase {
  reason: string;
}

/** Fired after each model response has been received and appended. */
export interface PostSamplingEvent extends SessionEventBase {
  /** Id of the assistant message just appended. */
  messageId: string;
  /** Context size in tokens after this response, as counted by the caller. */
  contextTokens: number;
  /** Tool calls the response made (0 for a final answer). */
  toolCalls: number;
}

export interface PreToolUseEvent extends SessionEventBase {
  toolName: string;
  toolUseId: string;
  /** The input the model asked for; a plugin may rewrite it. */
  input: Record<string, unknown>;
}

/**
 * What a `preToolUse` tap decides. Every tap runs: "allow" and `undefined` (no opinion) let the next tap
 * decide too, "rewrite" replaces the input the next taps see, "deny" stops the gate and wins.
 */
export type PreToolUseDecision =
  | { behavior: "allow" }
  | { behavior: "deny"; reason: string; by?: string }
  | { behavior: "rewrite"; input: Record<string, unknown> };

export interface PostToolUseEvent extends SessionEventBase {
  toolName: string;
  toolUseId: string;
  input: Record<string, unknown>;
  /** The tool's result as text (or a short description of non-text output). */
  output: string;
  isError: boolean;
}

export interface UserPromptSubmitEvent extends SessionEventBase {
  prompt: string;
}

/**
 * The kind of the attachment a `userPromptSubmit` tap adds to block the prompt: its `content` is the reason
 * shown to the user, its `source` who blocked. The session then sends nothing and keeps the prompt out of the
 * context (as Claude Code does for a UserPromptSubmit hook that exits 2 or answers `decision: "block"`).
 */
export const PROMPT_BLOCK_ATTACHMENT_KIND = "prompt-block";

/** Context a `sessionStart` or `userPromptSubmit` tap adds. */
export type HookAttachments = Attachment[];
