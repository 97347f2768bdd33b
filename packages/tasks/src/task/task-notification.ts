import type { TaskEndReason, TaskType } from "./task-record.ts";

interface TaskNotificationBase {
  taskId: string;
  type: TaskType;
  description: string;
  /** Epoch milliseconds when it was raised. */
  at: number;
  /** The task's output file, when readers on this machine can open it (the file backend). */
  outputPath?: string;
}

/** The task ended successfully. */
export interface TaskFinishedNotification extends TaskNotificationBase {
  kind: "finished";
  exitCode?: number;
  result?: string;
  outputBytes: number;
}

/** The task ended unsuccessfully: non-zero exit, a signal, its timeout, an error, or lost while unwatched. */
export interface TaskFailedNotification extends TaskNotificationBase {
  kind: "failed";
  reason: TaskEndReason;
  exitCode?: number;
  signal?: string;
  error?: string;
  /** The last output (at most 500 bytes), so the agent sees the error without reading the file. */
  tail: string;
}

/** The task printed nothing for a while and its last output looks like a prompt waiting for an answer. */
export interface TaskStalledNotification extends TaskNotificationBase {
  kind: "stalled";
  /** What kind of prompt matched ("yes/no question", "password", "ssh host key", …). */
  prompt: string;
  /** The last output (at most 500 bytes), ending with the prompt. */
  tail: string;
  /** How long the output had been quiet, in milliseconds. */
  quietMs: number;
}

/** The task passed its deadline and is still running; raised once. */
export interface TaskDeadlineNotification extends TaskNotificationBase {
  kind: "deadline";
  runningMs: number;
  tail: string;
}

/** An agent or teammate sent the coordinator a message. */
export interface TaskMessageNotification extends TaskNotificationBase {
  kind: "message";
  /** The sender's mailbox address. */
  from: string;
  text: string;
}

/** A queued task has waited this long with no live worker that runs its type; raised once. */
export interface TaskNoWorkerNotification extends TaskNotificationBase {
  kind: "no_worker";
  waitingMs: number;
}

/** What `takeNotifications()` returns; each becomes part of an attachment for the agent's next turn. */
export type TaskNotification =
  | TaskFinishedNotification
  | TaskFailedNotification
  | TaskStalledNotification
  | TaskDeadlineNotification
  | TaskMessageNotification
  | TaskNoWorkerNotification;

export type TaskNotificationKind = TaskNotification["kind"];
