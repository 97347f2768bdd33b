import { randomUUID } from "node:crypto";
import type { SqlClient, SqlQueryable } from "@unforget/postgres";
import {
  TaskNotFoundError,
  type TaskNotification,
  type TaskRecord,
  type TaskRecordInit,
  TaskStateError,
  type TaskStateStore,
} from "@unforget/tasks";
import { CHANNELS, type TransactionBound } from "./task-tables.ts";

interface TaskRow {
  version: number;
  record: TaskRecordInit;
}

function toRecord(row: TaskRow): TaskRecord {
  return { ...row.record, pending: row.record.pending ?? [], version: Number(row.version) };
}

/** The columns kept beside the record for queries. */
function columns(record: TaskRecordInit): unknown[] {
  return [
    record.status,
    record.sessionId ?? null,
    record.attempt ?? 0,
    record.status === "running" ? (record.owner?.managerId ?? null) : null,
  ];
}

/** What is queued with a task: its portable spec and the pg-boss queue and job. */
export interface QueuedTask {
  spec: Record<string, unknown>;
  queue: string;
}

/** Inserts a new task row (version 1); rejects with `TaskStateError` when the id exists. */
export async function insertTask(
  database: SqlQueryable,
  record: TaskRecordInit,
  queued?: QueuedTask,
): Promise<TaskRecord> {
  const inserted = await database.query(
    `INSERT INTO unforget_task (id, version, record, status, session_id, attempt, worker_id, created_at, spec, queue)
     VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (id) DO NOTHING`,
    [
      record.id,
      JSON.stringify(record),
      ...columns(record),
      record.createdAt,
      queued === undefined ? null : JSON.stringify(queued.spec),
      queued?.queue ?? null,
    ],
  );
  if (inserted.rowCount === 0) {
    throw new TaskStateError(`A task with id "${record.id}" already exists; choose another id.`, {
      taskId: record.id,
    });
  }
  return { ...record, version: 1 };
}

/** The notifications `next` adds to `previous` (pending only grows by appending, or is emptied when taken). */
function addedNotifications(
  previous: readonly TaskNotification[],
  next: readonly TaskNotification[],
): TaskNotification[] {
  return next.length > previous.length ? next.slice(previous.length) : [];
}

/**
 * Writes `next` over version `expectedVersion` in one transaction: the row, an event per notification it adds
 * (committed with it), and a NOTIFY with the task's id. `writeId` makes a retried transaction whose first
 * COMMIT went through find its own write instead of reporting a conflict.
 */
export async function updateTask(
  database: SqlQueryable,
  id: string,
  expectedVersion: number,
  next: TaskRecordInit,
  writeId: string,
): Promise<TaskRecord | undefined> {
  const current = await database.query<TaskRow & { last_write: string | null }>(
    "SELECT version, record, last_write FROM unforget_task WHERE id = $1 FOR UPDATE",
    [id],
  );
  const row = current.rows[0];
  if (row === undefined) {
    throw new TaskNotFoundError(`No task "${id}"; it cannot be updated. Call list() for the ids.`, {
      taskId: id,
    });
  }
  if (Number(row.version) !== expectedVersion) {
    return row.last_write === writeId ? toRecord(row) : undefined;
  }
  const record = { ...next, id };
  await database.query(
    `UPDATE unforget_task SET version = version + 1, record = $2, status = $3, session_id = $4, attempt = $5,
       worker_id = $6, last_write = $7,
       lease_until = CASE WHEN $6::text IS NULL THEN NULL ELSE lease_until END
     WHERE id = $1`,
    [id, JSON.stringify(record), ...columns(record), writeId],
  );
  for (const notification of addedNotifications(row.record.pending ?? [], record.pending)) {
    await database.query(
      "INSERT INTO unforget_task_event (task_id, session_id, kind, payload) VALUES ($1, $2, $3, $4)",
      [id, record.sessionId ?? null, notification.kind, JSON.stringify(notification)],
    );
  }
  await database.query("SELECT pg_notify($1, $2)", [CHANNELS.task, id]);
  return { ...record, version: expectedVersion + 1 };
}

/** Task records in `unforget_task`, with compare-and-swap on the version column. */
export function createPostgresTaskStateStore(client: SqlClient, bound: TransactionBound): TaskStateStore {
  return {
    async create(record) {
      return insertTask(client, record);
    },

    async get(id) {
      const result = await client.query<TaskRow>("SELECT version, record FROM unforget_task WHERE id = $1", [
        id,
      ]);
      const row = result.rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    async list() {
      const result = await client.query<TaskRow>(
        'SELECT version, record FROM unforget_task ORDER BY created_at, id COLLATE "C"',
      );
      return result.rows.map(toRecord);
    },

    async update(id, expectedVersion, next) {
      const writeId = randomUUID();
      return client.transaction(
        (transaction) => updateTask(transaction, id, expectedVersion, next, writeId),
        bound,
      );
    },
  };
}
