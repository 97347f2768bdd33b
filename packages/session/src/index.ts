// The manager's classes themselves, so that a refusal from either the manager or the loop is one `instanceof`.
export { ContextOverflowError, PinLimitError, PinNotFoundError } from "@unforget/compact";
export type { ContextBreakdown } from "./context/context-breakdown.ts";
export type {
  AgentSession,
  CompactReport,
  CompactSessionOptions,
  SessionStatus,
  SessionTurn,
} from "./loop/agent-session.ts";
export { createAgentSession } from "./loop/agent-session.ts";
export type {
  AgentSessionOptions,
  SessionHookOptions,
  SessionMemoryOptions,
  SessionPermissions,
} from "./loop/agent-session-options.ts";
export type { TurnResult } from "./loop/run-turn.ts";
export {
  SessionBusyError,
  SessionClosedError,
  type SessionErrorCode,
  SessionNotFoundError,
  SessionPackageMissingError,
} from "./loop/session-errors.ts";
export type {
  SessionEvent,
  SessionEventType,
  ToolCallStatus,
  TurnStopReason,
} from "./loop/session-events.ts";
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
} from "./optional/session-capabilities.ts";
export type { PermissionGate } from "./permissions/permission-gate.ts";
export { createPermissionGate } from "./permissions/permission-gate.ts";
export type {
  PermissionBehavior,
  PermissionRule,
  PermissionRuleSource,
} from "./permissions/permission-rule.ts";
export { PermissionRuleError, parsePermissionRule } from "./permissions/permission-rule.ts";
export type {
  LoadedPermissionSettings,
  LoadPermissionSettingsOptions,
} from "./permissions/permission-settings.ts";
export { loadPermissionSettings } from "./permissions/permission-settings.ts";
export type {
  CanUseTool,
  CanUseToolOptions,
  PermissionDecision,
  PermissionDecisionReason,
  PermissionGateOptions,
  PermissionMode,
  PermissionResponse,
  PermissionRuleLists,
  PermissionUpdate,
} from "./permissions/permission-types.ts";
export { PERMISSION_MODES } from "./permissions/permission-types.ts";
export type {
  SessionSpan,
  SessionSpanEnd,
  SessionSpanStart,
  SessionTracer,
} from "./telemetry/session-tracer.ts";
export { noopTracer } from "./telemetry/session-tracer.ts";
export type {
  OpenTelemetrySpan,
  OpenTelemetryTracer,
  OpenTelemetryTracerOptions,
} from "./telemetry/telemetry.ts";
export { createOpenTelemetryTracer } from "./telemetry/telemetry.ts";
export type { AgentDefinition } from "./tools/agent-tool.ts";
export { AGENT_TOOL_NAME } from "./tools/agent-tool.ts";
export type { ToolCallAuthorizer, ToolCallDecision, ToolCallRequest } from "./tools/tool-authorization.ts";
export { allowAllToolCalls } from "./tools/tool-authorization.ts";
export type { SessionSummary } from "./transcript/list-sessions.ts";
export { listSessions } from "./transcript/list-sessions.ts";
