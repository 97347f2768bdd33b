import type { Tool } from "@unforget/core";

/**
 * One tool call the loop wants to run, as whoever decides permissions sees it: the input has passed the
 * tool's schema and the PreToolUse hooks (rewritten if a hook rewrote it).
 */
export interface ToolCallRequest {
  readonly tool: Tool;
  readonly input: Record<string, unknown>;
  readonly toolUseId: string;
  readonly sessionId: string;
  /** The session's working directory (absolute). */
  readonly cwd: string;
  /** Aborted when the turn is cancelled: an authorizer that asks the user stops asking. */
  readonly signal: AbortSignal;
  /** "allow" when a PreToolUse hook explicitly allowed the call (deny rules may still apply; asking may be skipped). */
  readonly hookDecision?: "allow";
}

/** What an authorizer decides about one call. */
export type ToolCallDecision =
  | {
      behavior: "allow";
      /** Run the call with this input instead (a UI that let the user edit the call); validated again. */
      input?: Record<string, unknown>;
      /** Which rule or answer allowed it, for the event stream and the logs. */
      reason?: string;
    }
  | {
      behavior: "deny";
      /** What the model reads as the call's error result: why, and what to do instead. */
      message: string;
      /** Which rule or answer denied it. */
      reason?: string;
    };

/**
 * The one place the loop asks "may this call run?". Called once per call, after validation and PreToolUse,
 * before `execute`; calls of one turn are authorised one at a time, in order, even when they then run in
 * parallel. A rejection is a denial (fail closed).
 */
export type ToolCallAuthorizer = (request: ToolCallRequest) => Promise<ToolCallDecision>;

/** Allows every call: the session's default when no authorizer is given. */
export const allowAllToolCalls: ToolCallAuthorizer = async () => ({ behavior: "allow" });
