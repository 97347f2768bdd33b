// The manager's class itself, so that a refusal from either the manager or the loop is one `instanceof`.
export { ContextOverflowError } from "@unforget/compact";
export type {
  AgentSession,
  CompactReport,
  SessionStatus,
  SessionTurn,
} from "./agent-session.ts";
export { createAgentSession } from "./agent-session.ts";
export type {
  AgentSessionOptions,
  SessionHookOptions,
  SessionMemoryOptions,
  SessionPermissions,
} from "./agent-session-options.ts";
export type { AgentDefinition } from "./agent-tool.ts";
export { AGENT_TOOL_NAME } from "./agent-tool.ts";
export type { ContextBreakdown } from "./context-breakdown.ts";
export type { SessionSummary } from "./list-sessions.ts";
export { listSessions } from "./list-sessions.ts";
export type {
  CanUseTool,
  CanUseToolOptions,
  PermissionDecision,
  PermissionDecisionReason,
  PermissionGate,
  PermissionGateOptions,
  PermissionMode,
  PermissionResponse,
  PermissionRuleLists,
  PermissionUpdate,
} from "./permission-gate.ts";
export { createPermissionGate, PERMISSION_MODES } from "./permission-gate.ts";
export type { PermissionBehavior, PermissionRule, PermissionRuleSource } from "./permission-rule.ts";
export { PermissionRuleError, parsePermissionRule } from "./permission-rule.ts";
export type { LoadedPermissionSettings, LoadPermissionSettingsOptions } from "./permission-settings.ts";
export { loadPermissionSettings } from "./permission-settings.ts";
export type { TurnResult } from "./run-turn.ts";
export type {
  SessionDreamJob,
  SessionLocalAgentTask,
  SessionMcpHttpServerConfig,
  SessionMcpServerConfig,
  SessionMcpServerError,
  SessionMcpServerEvent,
  SessionMcpServerStatus,
  SessionMcpServers,
  SessionMcpStdioServerConfig,
  SessionMemoryStore,
  SessionNotes,
  SessionProposalQueue,
  SessionTaskManager,
  SessionTaskNotification,
} from "./session-capabilities.ts";
export {
  SessionBusyError,
  SessionClosedError,
  type SessionErrorCode,
  SessionNotFoundError,
  SessionPackageMissingError,
} from "./session-errors.ts";
export type { SessionEvent, SessionEventType, ToolCallStatus, TurnStopReason } from "./session-events.ts";
export type { SessionSpan, SessionSpanEnd, SessionSpanStart, SessionTracer } from "./session-tracer.ts";
export { noopTracer } from "./session-tracer.ts";
export type { OpenTelemetrySpan, OpenTelemetryTracer, OpenTelemetryTracerOptions } from "./telemetry.ts";
export { createOpenTelemetryTracer } from "./telemetry.ts";
export type { ToolCallAuthorizer, ToolCallDecision, ToolCallRequest } from "./tool-authorization.ts";
export { allowAllToolCalls } from "./tool-authorization.ts";
