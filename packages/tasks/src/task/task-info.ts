import type { TaskOutputStat } from "../backend/task-backend.ts";
import type { TaskEndReason, TaskRecord, TaskStatus, TaskType } from "./task-record.ts";

/** Who watches a task: this manager, another live manager, or nobody (a manager will adopt it). */
export type TaskWatcher = "this manager" | "another manager" | "nobody";

/** A task as `list()`, `get()` and `stop()` report it. */
export interface TaskInfo {
  id: string;
  type: TaskType;
  description: string;
  status: TaskStatus;
  /** Epoch milliseconds. */
  createdAt: number;
  endedAt?: number;
  endReason?: TaskEndReason;
  exitCode?: number;
  signal?: string;
  error?: string;
  result?: string;
  cwd?: string;
  timeoutMs?: number;
  deadlineAt?: number;
  /** The output file, when readers on this machine can open it (the file backend). */
  outputPath?: string;
  /** Bytes of output so far (committed: what `readOutput` can read). */
  outputBytes: number;
  /** Epoch milliseconds of the last output; absent before any output. */
  lastOutputAt?: number;
  /** Which run this is, for a task a queue runs (1, then 2 after its worker was lost, …). */
  attempt?: number;
  /** Set when an attempt's worker was lost: its output is complete up to this byte offset only. */
  outputLostAfter?: number;
  /** The process group leader, while a process does the task's work. */
  pid?: number;
  watchedBy: TaskWatcher;
}

export function toTaskInfo(
  record: TaskRecord,
  output: TaskOutputStat,
  outputPath: string | undefined,
  watchedBy: TaskWatcher,
): TaskInfo {
  const info: TaskInfo = {
    id: record.id,
    type: record.type,
    description: record.description,
    status: record.status,
    createdAt: record.createdAt,
    endedAt: record.endedAt,
    endReason: record.endReason,
    exitCode: record.exitCode,
    signal: record.signal,
    error: record.error,
    result: record.result,
    cwd: record.cwd,
    timeoutMs: record.timeoutMs,
    deadlineAt: record.deadlineAt,
    outputPath,
    outputBytes: output.size,
    lastOutputAt: output.size > 0 ? output.lastWriteAt : undefined,
    attempt: record.attempt,
    outputLostAfter: record.outputLostAfter,
    pid: record.process?.pid,
    watchedBy,
  };
  for (const key of Object.keys(info) as (keyof TaskInfo)[]) if (info[key] === undefined) delete info[key];
  return info;
}
