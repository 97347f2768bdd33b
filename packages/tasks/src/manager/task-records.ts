import type { TaskStateStore } from "../backend/task-state-store.ts";
import { TaskNotFoundError, TaskStoreError } from "../task/task-errors.ts";
import type { TaskRecord, TaskRecordInit } from "../task/task-record.ts";

/** The manager's window on the store: a cache of what it wrote, and updates that never lose a change. */
export interface TaskRecords {
  readonly store: TaskStateStore;
  create(record: TaskRecordInit): Promise<TaskRecord>;
  /** The cached record when this manager wrote it last, else the store's (`fresh` always asks the store). */
  get(id: string, fresh?: boolean): Promise<TaskRecord | undefined>;
  /**
   * Applies `change` to the latest record with compare-and-swap, re-reading and re-applying when another
   * writer got there first; `change` returning undefined means "nothing to do". Changes to one task from this
   * manager run one after the other. Rejects with `TaskNotFoundError` for an unknown id.
   */
  mutate(id: string, change: (record: TaskRecord) => TaskRecordInit | undefined): Promise<TaskRecord>;
}

const MAX_ATTEMPTS = 50;

function withoutVersion(record: TaskRecord): TaskRecordInit {
  const { version: _version, ...rest } = record;
  return rest;
}

export function createTaskRecords(store: TaskStateStore): TaskRecords {
  const cache = new Map<string, TaskRecord>();
  const chains = new Map<string, Promise<unknown>>();

  const read = async (id: string, fresh: boolean) => {
    const cached = fresh ? undefined : cache.get(id);
    if (cached !== undefined) return cached;
    const record = await store.get(id);
    if (record !== undefined) cache.set(id, record);
    return record;
  };

  const apply = async (id: string, change: (record: TaskRecord) => TaskRecordInit | undefined) => {
    let current = await read(id, false);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (current === undefined) {
        throw new TaskNotFoundError(`No task "${id}". Call list() to see the tasks.`, {
          taskId: id,
        });
      }
      const next = change(current);
      if (next === undefined) return current;
      const stored = await store.update(
        id,
        current.version,
        withoutVersion({ ...current, ...next, version: 0 }),
      );
      if (stored !== undefined) {
        cache.set(id, stored);
        return stored;
      }
      current = await read(id, true);
    }
    throw new TaskStoreError(
      `Task "${id}" kept changing under ${MAX_ATTEMPTS} attempts to update it; retry.`,
    );
  };

  return {
    store,
    async create(record) {
      const created = await store.create(record);
      cache.set(created.id, created);
      return created;
    },
    get: (id, fresh = false) => read(id, fresh),
    mutate(id, change) {
      const previous = chains.get(id) ?? Promise.resolve();
      const result = previous.then(() => apply(id, change));
      const settled = result.catch(() => undefined);
      chains.set(id, settled);
      void settled.then(() => {
        if (chains.get(id) === settled) chains.delete(id);
      });
      return result;
    },
  };
}
