import { randomUUID } from "node:crypto";
import type { SqlClient, SqlQueryable } from "@unforget/postgres";
import type { TaskNotification, TaskRecordInit } from "@unforget/tasks";
import type PgBoss from "pg-boss";
import { bossDatabase } from "./pg-boss-queue.ts";
import { updateTask } from "./postgres-task-state-store.ts";
import type { TransactionBound } from "./task-tables.ts";

/** Tasks reconciled per transaction; the rest wait for the next round (SKIP LOCKED shares them out). */
const BATCH = 20;
const TAIL_BYTES = 500;

interface LapsedRow {
  id: string;
  version: number;
  record: TaskRecordInit;
  queue: string | null;
  job_id: string | null;
  attempt: number;
}

/** The committed size of an attempt's output, and its last bytes as text. */
async function committedOutput(database: SqlQueryable, id: string, attempt: number) {
  const size = await database.query<{ size: string | number }>(
    `SELECT byte_offset + length(bytes) AS size FROM unforget_task_output WHERE task_id = $1 AND attempt = $2
     ORDER BY byte_offset DESC LIMIT 1`,
    [id, attempt],
  );
  const bytes = Number(size.rows[0]?.size ?? 0);
  const last = await database.query<{ bytes: Uint8Array }>(
    `SELECT bytes FROM unforget_task_output WHERE task_id = $1 AND attempt = $2 ORDER BY byte_offset DESC LIMIT 2`,
    [id, attempt],
  );
  const tail = Buffer.concat(
    last.rows
      .reverse()
      .map((row) => Buffer.from(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength)),
  );
  let text = tail.subarray(Math.max(0, tail.length - TAIL_BYTES));
  while (text.length > 0 && (text[0]! & 0xc0) === 0x80) text = text.subarray(1);
  return { bytes, tail: text.toString("utf8") };
}

/**
 * Tasks whose worker stopped renewing its lease (killed, paused, cut off): each job is failed through pg-boss
 * (FOR UPDATE SKIP LOCKED, so any number of workers share the work), which runs it again under the type's
 * retry limit. The record is released for that next attempt, or, with no retry left, recorded as failed
 * (`lost`). Either way it says how much of the lost attempt's output was committed (`outputLostAfter`).
 */
export async function reconcileLapsedLeases(
  client: SqlClient,
  boss: PgBoss,
  bound: TransactionBound,
): Promise<number> {
  return client.transaction(async (transaction) => {
    const lapsed = await transaction.query<LapsedRow>(
      `SELECT id, version, record, queue, job_id, attempt FROM unforget_task
       WHERE status = 'running' AND worker_id IS NOT NULL AND lease_until < now()
       ORDER BY lease_until LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
    );
    const db = bossDatabase(transaction);
    for (const row of lapsed.rows) {
      const { record } = row;
      const attempt = Number(row.attempt);
      const output = await committedOutput(transaction, row.id, attempt);
      let retries = false;
      if (row.queue !== null && row.job_id !== null) {
        const job = await boss.getJobById(row.queue, row.job_id, { db, includeArchive: false });
        retries = job !== null && job.state === "active" && job.retryCount < job.retryLimit;
        if (job !== null && (job.state === "active" || job.state === "created" || job.state === "retry")) {
          await boss.fail(row.queue, row.job_id, { reason: "the worker's lease lapsed" }, { db });
        }
      }
      const worker = record.owner;
      const where = worker === undefined ? "" : ` (pid ${worker.pid} on ${worker.hostname})`;
      const lost = `its worker${where} stopped renewing its lease during attempt ${attempt}; its output is complete up to byte ${output.bytes}`;
      const notification: TaskNotification = {
        kind: "failed",
        taskId: row.id,
        type: record.type,
        description: record.description,
        at: Date.now(),
        reason: "lost",
        error: lost,
        tail: output.tail,
      };
      // Stopped on purpose, or no retry left: it ends here. Otherwise the next attempt starts from scratch.
      const ends = !retries || record.stopRequestedAt !== undefined;
      const next: TaskRecordInit = ends
        ? {
            ...record,
            status: record.stopRequestedAt !== undefined ? "killed" : "failed",
            endReason: record.stopRequestedAt !== undefined ? "stopped" : "lost",
            endedAt: Date.now(),
            error: record.stopRequestedAt !== undefined ? undefined : lost,
            process: undefined,
            outputLostAfter: output.bytes,
            pending:
              record.stopRequestedAt !== undefined ? record.pending : [...record.pending, notification],
          }
        : { ...record, owner: undefined, process: undefined, outputLostAfter: output.bytes };
      await updateTask(transaction, row.id, Number(row.version), next, randomUUID());
    }
    return lapsed.rows.length;
  }, bound);
}
