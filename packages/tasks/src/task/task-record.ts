import type { ProcessIdentity } from "@unforget/process";
import type { TaskNotification } from "./task-notification.ts";

/** The kinds of background task built in; `defineTaskType` adds others. */
export type BuiltInTaskType =
  | "local_bash"
  | "local_agent"
  | "local_workflow"
  | "monitor"
  | "monitor_mcp"
  | "dream"
  | "remote_agent"
  | "in_process_teammate";

/** The type of a task: a built-in one, or one registered with `defineTaskType`. */
export type TaskType = BuiltInTaskType | (string & {});

/** Every built-in task type, in the order the docs list them. */
export const TASK_TYPES: readonly BuiltInTaskType[] = [
  "local_bash",
  "local_agent",
  "local_workflow",
  "monitor",
  "monitor_mcp",
  "dream",
  "remote_agent",
  "in_process_teammate",
];

/** "running" until the task ends; the three others are final and never change again. */
export type TaskStatus = "running" | "completed" | "failed" | "killed";

/**
 * Why a task ended. "exit": its process exited or its job returned; "signal": a signal nobody asked for
 * killed it; "timeout": it ran past its `timeoutMs` and was stopped; "stopped": `stop()` ended it; "error":
 * it could not start or its job threw; "lost": it ended while no manager watched and left no exit status;
 * "output_limit": its output passed the backend's cap and it was stopped (nothing was cut silently).
 */
export type TaskEndReason = "exit" | "signal" | "timeout" | "output_limit" | "stopped" | "error" | "lost";

/** The manager (or worker) that watches a task; another adopts the task once this one's lease has lapsed. */
export interface TaskOwner extends ProcessIdentity {
  /** Random per manager instance, so that two managers in one process tell their tasks apart. */
  managerId: string;
  hostname: string;
}

/** What the store keeps about one task. Plain JSON: a queue-backed store can hold it as a row or a job. */
export interface TaskRecord {
  /** Unique in the store; safe as a file name. */
  readonly id: string;
  /** Set by the store: 1 on create, +1 on every successful update. */
  readonly version: number;
  readonly type: TaskType;
  /** One line for people and agents: the command, or the job's description. */
  readonly description: string;
  readonly status: TaskStatus;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly endedAt?: number;
  readonly endReason?: TaskEndReason;
  /** The command's exit code (local_bash, a workflow's failing step). */
  readonly exitCode?: number;
  /** The signal that ended the process, when one did. */
  readonly signal?: string;
  /** Why the task failed, in words. */
  readonly error?: string;
  /** What an agent, teammate, workflow or dream reported back (its full text is also in the output). */
  readonly result?: string;
  /** The working directory of a command task. */
  readonly cwd?: string;
  readonly timeoutMs?: number;
  /** Epoch milliseconds after which the task notifies once, whether or not it has ended. */
  readonly deadlineAt?: number;
  readonly deadlineNotified?: boolean;
  /** Set once a queued task has notified that no live worker runs its type. */
  readonly noWorkerNotified?: boolean;
  /** Set by `stop()` before any signal is sent, so a manager that dies mid-stop still records "killed". */
  readonly stopRequestedAt?: number;
  /** Set when a limit (its timeout, the output cap) stopped the task rather than `stop()`. */
  readonly limit?: "timeout" | "output_limit";
  /** Which run this is: 1 for the first, +1 each time a worker claims it again after a failure (queues). */
  readonly attempt?: number;
  /** Set when the worker running an attempt was lost: its output is complete up to this byte offset only. */
  readonly outputLostAfter?: number;
  /** The process group leader that currently does the task's work, when a process does. */
  readonly process?: ProcessIdentity;
  /** The manager watching the task; absent once released by `close()` or after the task ended. */
  readonly owner?: TaskOwner;
  /** The session that started the task: its managers deliver the notifications of a task run elsewhere. */
  readonly sessionId?: string;
  /** Notifications raised but not yet taken; they survive a crash of the manager. */
  readonly pending: readonly TaskNotification[];
}

/** A record as written: the store assigns the version. */
export type TaskRecordInit = Omit<TaskRecord, "version">;

/** True once a task has reached a final status. */
export function isFinalStatus(status: TaskStatus): boolean {
  return status !== "running";
}
