import type { ContextEvent } from "@unforget/compact";
import type { Message, StopReason, ToolOutput, Usage } from "@unforget/core";
import type { SessionMcpServerEvent, SessionTaskNotification } from "../optional/session-capabilities.ts";

/** Why a turn (one `send`) ended. */
export type TurnStopReason =
  /** The model's own reasons for its last response (`end_turn`, `max_tokens`, `refusal`, …). */
  | StopReason
  /** `maxTurns` model calls were made; the conversation is valid and the next `send` goes on from there. */
  | "max_turns"
  /** The signal was aborted or `interrupt()` was called: partial text kept, unfinished calls marked interrupted. */
  | "aborted"
  /** A UserPromptSubmit hook blocked the prompt; nothing was sent. */
  | "blocked"
  /**
   * `pauseAfterCompaction`: an automatic compaction summarised the context mid-turn and the turn stopped before
   * the next request; the next `send` goes on from there.
   */
  | "compacted";

/** How a tool call ended, as the loop saw it. */
export type ToolCallStatus =
  /** It ran and returned (its output may still be an error the tool reported). */
  | "completed"
  /** The model named a tool the session does not have. */
  | "unknown-tool"
  /** The input failed the tool's JSON Schema (or was not an object). */
  | "invalid-input"
  /** A PreToolUse hook or the permission check denied it. */
  | "denied"
  /** It threw or returned something that is not a `ToolOutput`. */
  | "failed"
  /** It ran past its timeout and was stopped. */
  | "timed-out"
  /** The turn was aborted before or while it ran. */
  | "interrupted"
  /** The model's output hit `max_tokens` while it was writing this call, so it was never run. */
  | "truncated";

/**
 * What `send` streams, in order. Every message appended to the conversation (the prompt, attachments, the
 * assistant's responses, tool results) also arrives as a `message` event, so a UI or a `stream-json` printer
 * needs nothing else to follow the conversation.
 */
export type SessionEvent =
  | { type: "turn-start"; sessionId: string; prompt: string }
  /** A message was appended to the conversation (and written to the transcript). */
  | { type: "message"; message: Message }
  /** A model call is about to be sent; `tokens` is the context size after compaction. */
  | { type: "model-request"; turn: number; model: string; tokens: number; threshold: number }
  | { type: "text-delta"; turn: number; index: number; text: string }
  | { type: "thinking-delta"; turn: number; index: number; thinking: string }
  /** A model call ended (its assistant message follows as a `message` event when it has content). */
  | { type: "model-response"; turn: number; responseId: string; stopReason: StopReason; usage: Usage }
  /** Usage of the last response and the running total of this turn. */
  | { type: "usage"; turn: number; usage: Usage; total: Usage }
  /** The provider said the prompt was too long: the context was compacted and the call is sent again once. */
  | { type: "retry"; turn: number; reason: "prompt-too-long"; tokensBefore: number; tokensAfter: number }
  /** A tool call passed every check and starts running. */
  | { type: "tool-start"; toolUseId: string; name: string; input: Record<string, unknown> }
  /** A tool call ended, however it ended; `output` is exactly what the model reads. */
  | {
      type: "tool-end";
      toolUseId: string;
      name: string;
      status: ToolCallStatus;
      output: ToolOutput;
      durationMs: number;
    }
  /** The permission check asks the user about a call (through `canUseTool`). */
  | { type: "permission-request"; toolUseId: string; name: string; input: Record<string, unknown> }
  /** What the permission check (or the PreToolUse hooks) decided about a call that was denied or asked about. */
  | {
      type: "permission-decision";
      toolUseId: string;
      name: string;
      behavior: "allow" | "deny";
      reason?: string;
    }
  /** What the context manager reported: a layer that acted, a failure, a veto, a background summary, … */
  | { type: "context"; event: ContextEvent }
  /** Background tasks reported; the notifications were added to the context before the next model call. */
  | { type: "task-notification"; notifications: SessionTaskNotification[] }
  /** A UserPromptSubmit hook blocked the prompt. */
  | { type: "prompt-blocked"; reason: string; by?: string }
  /** An event of a sub-agent the Agent tool runs in the foreground (its own turn, in its own session). */
  | { type: "subagent"; parentToolUseId: string; agentType: string; event: SessionEvent }
  /** An MCP server connected, changed its tools, failed (its tools were removed) or misbehaved. */
  | { type: "mcp"; event: SessionMcpServerEvent }
  /** A plugin or hook command failed; the session went on. */
  | { type: "hook-error"; message: string }
  /** The last event of every turn. */
  | {
      type: "turn-end";
      stopReason: TurnStopReason;
      /** Model calls made in this turn. */
      turns: number;
      usage: Usage;
      /** The text of the last assistant message of the turn ("" when there was none). */
      text: string;
    };

export type SessionEventType = SessionEvent["type"];
