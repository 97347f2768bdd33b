import { TaskNotFoundError } from "../task/task-errors.ts";
import { assertTaskId } from "../task/task-id.ts";
import { type TaskInfo, type TaskWatcher, toTaskInfo } from "../task/task-info.ts";
import { isFinalStatus, type TaskRecord } from "../task/task-record.ts";
import { type ManagerState, ownerHolds } from "./manager-state.ts";

/**
 * The record of a task, or `TaskNotFoundError`. A task this manager runs is answered from its cache (it wrote
 * the record last); any other is read from the store unless `fresh` is false.
 */
export async function requireRecord(state: ManagerState, id: string, fresh = true): Promise<TaskRecord> {
  assertTaskId(id);
  const record = await state.records.get(id, fresh && !state.live.has(id));
  if (record === undefined) {
    throw new TaskNotFoundError(`No task "${id}". Call list() to see the tasks.`, {
      taskId: id,
    });
  }
  return record;
}

async function watcherOf(state: ManagerState, record: TaskRecord): Promise<TaskWatcher> {
  if (isFinalStatus(record.status)) return "nobody";
  if (state.live.has(record.id)) return "this manager";
  return (await ownerHolds(state, record.owner)) ? "another manager" : "nobody";
}

/** A record as the manager's callers see it. */
export async function describeTask(state: ManagerState, record: TaskRecord): Promise<TaskInfo> {
  const [output, watchedBy] = await Promise.all([
    state.backend.output.stat(record.id),
    watcherOf(state, record),
  ]);
  return toTaskInfo(record, output, state.backend.output.localPath(record.id), watchedBy);
}
