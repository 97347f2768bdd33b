// Its typings name Node's types (child processes, signals), from the @types/node peer dependency.
/// <reference types="node" preserve="true" />

export type { ProcessIdentity } from "@unforget/process";
export { createFileTaskBackend, type FileTaskBackendOptions } from "./backend/file-task-backend.ts";
export { createFileTaskStateStore, type FileTaskStateStoreOptions } from "./backend/file-task-state-store.ts";
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
} from "./backend/task-backend.ts";
export type { TaskStateStore } from "./backend/task-state-store.ts";
export {
  INTERACTIVE_PROMPT_PATTERNS,
  matchInteractivePrompt,
  type PromptPattern,
} from "./lifecycle/prompt-patterns.ts";
export { createFileMailbox } from "./mailbox/file-mailbox.ts";
export { createInProcessMailbox } from "./mailbox/in-process-mailbox.ts";
export type {
  Mailbox,
  MailboxEndpoint,
  MailboxMessage,
  MailboxMessageInit,
  MailboxMessageKind,
  MailboxReceiveOptions,
} from "./mailbox/mailbox.ts";
export { createMailboxMessage } from "./mailbox/mailbox.ts";
export { createTaskExecutor, type TaskExecutor, type TaskExecutorOptions } from "./manager/task-executor.ts";
export {
  getTaskHooks,
  type TaskDeadlineEvent,
  type TaskSettledEvent,
  type TaskStalledEvent,
  type TaskStartedEvent,
} from "./manager/task-hooks.ts";
export {
  createTaskManager,
  type ReadOutputOptions,
  type StallOptions,
  type TaskManager,
  type TaskManagerOptions,
  type WriteOptions,
} from "./manager/task-manager.ts";
export type { OutputChunk } from "./output/task-output.ts";
export type { TaskOutputWriter } from "./output/task-output-writer.ts";
export {
  LeaseLostError,
  OutputOffsetError,
  type TaskErrorCode,
  TaskInputError,
  TaskNotFoundError,
  TaskNotPortableError,
  TaskStateError,
  TaskStoreError,
} from "./task/task-errors.ts";
export type { TaskInfo, TaskWatcher } from "./task/task-info.ts";
export type {
  TaskDeadlineNotification,
  TaskFailedNotification,
  TaskFinishedNotification,
  TaskMessageNotification,
  TaskNotification,
  TaskNotificationKind,
  TaskNoWorkerNotification,
  TaskStalledNotification,
} from "./task/task-notification.ts";
export type {
  BuiltInTaskType,
  TaskEndReason,
  TaskOwner,
  TaskRecord,
  TaskRecordInit,
  TaskStatus,
  TaskType,
} from "./task/task-record.ts";
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
} from "./task/task-spec.ts";
export {
  createTaskNotificationAttachment,
  createTaskStatusAttachment,
  createTaskStatusPlugin,
  renderTaskNotification,
  renderTaskStatus,
  type TaskStatusOptions,
} from "./tools/task-attachments.ts";
export { TASK_TOOL_NAMES } from "./tools/task-tool-names.ts";
export { createTaskTools, type TaskToolsOptions } from "./tools/task-tools.ts";
export { BUILT_IN_TASK_TYPES, PORTABLE_TASK_TYPES } from "./types/built-in-task-types.ts";
export { createDreamTaskType, type DreamTaskTypeOptions } from "./types/dream-task-type.ts";
export type { RemoteAgentConnector, RemoteAgentLaunch } from "./types/remote-agent.ts";
export type { ConnectMcp, McpMonitorClient, TaskCapabilities } from "./types/task-capabilities.ts";
export type { RunnerContext, TaskOutcome, TaskRunner } from "./types/task-runner.ts";
export {
  type AnyTaskSpec,
  type CustomTaskSpec,
  defineTaskType,
  type PortableTaskSpec,
  type TaskTypeDefinition,
} from "./types/task-type.ts";
