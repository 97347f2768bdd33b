// `@unforget/tasks/tools`: what a session needs to offer the task tools and report on tasks, without the manager,
// its runners and backends (a session loads it when it opens; the manager loads when a task is first used).
export {
  createTaskNotificationAttachment,
  createTaskStatusAttachment,
  createTaskStatusPlugin,
  renderTaskNotification,
  renderTaskStatus,
  type TaskStatusOptions,
} from "./task-attachments.ts";
export { TASK_TOOL_NAMES } from "./task-tool-names.ts";
export { createTaskTools, type TaskToolsOptions } from "./task-tools.ts";
