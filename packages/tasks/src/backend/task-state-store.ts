import type { TaskRecord, TaskRecordInit } from "../task/task-record.ts";

/**
 * Where a task manager keeps its task records. The file store keeps one state file per task in the
 * manager's directory; a queue-backed store (pg-boss, BullMQ) implements the same four calls. Every store
 * passes `describeTaskStateStoreContract` from `@unforget/tasks/testing`.
 */
export interface TaskStateStore {
  /** Called by `start()` for a new task: stores it as version 1; rejects with `TaskStateError` if the id exists. */
  create(record: TaskRecordInit): Promise<TaskRecord>;
  /** The latest stored version of a task, or undefined when no task has this id. Never a half-written record. */
  get(id: string): Promise<TaskRecord | undefined>;
  /** Every task, oldest first (by `createdAt`, then id); tasks still being created may be left out. */
  list(): Promise<TaskRecord[]>;
  /**
   * Compare-and-swap, also between processes: stores `next` as version `expectedVersion + 1` only if the
   * stored version is still `expectedVersion`, and resolves to the stored record; resolves undefined when
   * another writer got there first (re-read and retry). Rejects with `TaskNotFoundError` for an unknown id.
   */
  update(id: string, expectedVersion: number, next: TaskRecordInit): Promise<TaskRecord | undefined>;
}
