export type {
  AgentSession,
  CompactReport,
  SessionStatus,
  SessionTurn,
} from "./agent-session.ts";
export { createAgentSession } from "./agent-session.ts";
export type {
  AgentSessionOptions,
  CanUseTool,
  SessionHookOptions,
  SessionMemoryOptions,
} from "./agent-session-options.ts";
export type { AgentDefinition } from "./agent-tool.ts";
export { AGENT_TOOL_NAME } from "./agent-tool.ts";
export type { ContextBreakdown } from "./context-breakdown.ts";
export type { TurnResult } from "./run-turn.ts";
export {
  ContextOverflowError,
  SessionBusyError,
  SessionClosedError,
  type SessionErrorCode,
  SessionNotFoundError,
} from "./session-errors.ts";
export type { SessionEvent, SessionEventType, ToolCallStatus, TurnStopReason } from "./session-events.ts";
export type { SessionSpan, SessionSpanEnd, SessionSpanStart, SessionTracer } from "./session-tracer.ts";
export { noopTracer } from "./session-tracer.ts";
export type { ToolCallAuthorizer, ToolCallDecision, ToolCallRequest } from "./tool-authorization.ts";
export { allowAllToolCalls } from "./tool-authorization.ts";
