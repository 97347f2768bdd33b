import { loadMigrations, type MigrationSet } from "@unforget/postgres";

/** NOTIFY channels; payloads carry ids only (a payload must stay under 8 000 bytes). */
export const CHANNELS = {
  /** A task's record changed (its id): waiters and sessions read it again. */
  task: "unforget_task",
  /** A job was queued (the queue's name): idle workers fetch. */
  queue: "unforget_task_queue",
  /** A message arrived (its address): a waiting receive reads. */
  mail: "unforget_task_mail",
  /** A command was sent (the task's id): its owner reads its commands. */
  command: "unforget_task_command",
} as const;

/** The pg-boss queue of a task type. */
export function queueName(type: string): string {
  return `unforget_task_${type}`;
}

let migrations: Promise<MigrationSet> | undefined;

/** The tasks component's migrations (the SQL files shipped in `migrations/`). */
export function taskMigrations(): Promise<MigrationSet> {
  migrations ??= loadMigrations("tasks", new URL("../migrations/", import.meta.url));
  return migrations;
}

/** How each transaction of the tasks backend runs (`SqlClient.transaction`'s options). */
export interface TransactionBound {
  timeoutMs: number;
}

/**
 * What any statement of a transaction of the tasks backend, or any pause between its statements, may take
 * before the server ends the transaction: half a lease. An owner paused inside one (a claim, the reconciler, a
 * record update) holds its rows no longer than that, so the lease decides when its task moves on, not the
 * server's idle-in-transaction timeout.
 */
export function transactionBound(leaseMs: number): TransactionBound {
  return { timeoutMs: Math.max(1, Math.floor(leaseMs / 2)) };
}

/** Milliseconds as an SQL interval parameter: `$n * interval '1 millisecond'`. */
export const MILLISECONDS = "* interval '1 millisecond'";
