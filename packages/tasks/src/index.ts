// Its typings name Node's types (child processes, signals), from the @types/node peer dependency.
/// <reference types="node" preserve="true" />

export type { ProcessIdentity } from "@unforget/process";
export { BUILT_IN_TASK_TYPES, PORTABLE_TASK_TYPES } from "./built-in-task-types.ts";
export { createDreamTaskType, type DreamTaskTypeOptions } from "./dream-task-type.ts";
export { createFileMailbox } from "./file-mailbox.ts";
export { createFileTaskBackend, type FileTaskBackendOptions } from "./file-task-backend.ts";
export { createFileTaskStateStore, type FileTaskStateStoreOptions } from "./file-task-state-store.ts";
export { createInProcessMailbox } from "./in-process-mailbox.ts";
export type {
  Mailbox,
  MailboxEndpoint,
  MailboxMessage,
  MailboxMessageInit,
  MailboxMessageKind,
  MailboxReceiveOptions,
} from "./mailbox.ts";
export { createMailboxMessage } from "./mailbox.ts";
export {
  INTERACTIVE_PROMPT_PATTERNS,
  matchInteractivePrompt,
  type PromptPattern,
} from "./prompt-patterns.ts";
export type { RemoteAgentConnector, RemoteAgentLaunch } from "./remote-agent.ts";
export {
  createTaskNotificationAttachment,
  createTaskStatusAttachment,
  createTaskStatusPlugin,
  renderTaskNotification,
  renderTaskStatus,
  type TaskStatusOptions,
} from "./task-attachments.ts";
export type {
  TaskBackend,
  TaskCommand,
  TaskCommandInit,
  TaskCommandKind,
  TaskCommandResult,
  TaskCommandStore,
  TaskLeaseStore,
  TaskOutputFollow,
  TaskOutputShipper,
  TaskOutputStat,
  TaskOutputStore,
  TaskQueue,
} from "./task-backend.ts";
export type { ConnectMcp, McpMonitorClient, TaskCapabilities } from "./task-capabilities.ts";
export {
  LeaseLostError,
  OutputOffsetError,
  type TaskErrorCode,
  TaskInputError,
  TaskNotFoundError,
  TaskNotPortableError,
  TaskStateError,
  TaskStoreError,
} from "./task-errors.ts";
export { createTaskExecutor, type TaskExecutor, type TaskExecutorOptions } from "./task-executor.ts";
export {
  getTaskHooks,
  type TaskDeadlineEvent,
  type TaskSettledEvent,
  type TaskStalledEvent,
  type TaskStartedEvent,
} from "./task-hooks.ts";
export type { TaskInfo, TaskWatcher } from "./task-info.ts";
export {
  createTaskManager,
  type ReadOutputOptions,
  type StallOptions,
  type TaskManager,
  type TaskManagerOptions,
  type WriteOptions,
} from "./task-manager.ts";
export type {
  TaskDeadlineNotification,
  TaskFailedNotification,
  TaskFinishedNotification,
  TaskMessageNotification,
  TaskNotification,
  TaskNotificationKind,
  TaskNoWorkerNotification,
  TaskStalledNotification,
} from "./task-notification.ts";
export type { OutputChunk } from "./task-output.ts";
export type { TaskOutputWriter } from "./task-output-writer.ts";
export type {
  BuiltInTaskType,
  TaskEndReason,
  TaskOwner,
  TaskRecord,
  TaskRecordInit,
  TaskStatus,
  TaskType,
} from "./task-record.ts";
export type { RunnerContext, TaskOutcome, TaskRunner } from "./task-runner.ts";
export type {
  CommandWorkflowStep,
  DreamJob,
  DreamJobContext,
  DreamSpec,
  FunctionWorkflowStep,
  HealthCheck,
  InProcessTeammate,
  InProcessTeammateSpec,
  LocalAgentSpec,
  LocalBashSpec,
  LocalWorkflowSpec,
  McpMonitorSpec,
  MonitorOptions,
  MonitorSpec,
  RemoteAgentSpec,
  TaskJob,
  TaskJobContext,
  TaskSpec,
  TaskSpecBase,
  WorkflowStep,
  WorkflowStepContext,
} from "./task-spec.ts";
export type { TaskStateStore } from "./task-state-store.ts";
export { TASK_TOOL_NAMES } from "./task-tool-names.ts";
export { createTaskTools, type TaskToolsOptions } from "./task-tools.ts";
export {
  type AnyTaskSpec,
  type CustomTaskSpec,
  defineTaskType,
  type PortableTaskSpec,
  type TaskTypeDefinition,
} from "./task-type.ts";
