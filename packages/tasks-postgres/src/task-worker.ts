import { randomUUID } from "node:crypto";
import { UnforgetError } from "@unforget/core";
import type { SqlQueryable } from "@unforget/postgres";
import {
  createTaskExecutor,
  type PortableTaskSpec,
  type StallOptions,
  TaskInputError,
  type TaskRecord,
  type TaskRecordInit,
  TaskStoreError,
  type TaskTypeDefinition,
} from "@unforget/tasks";
import { setAsideEarlierAttempt, setAsideLeftOutput, shipLeftOutput } from "./left-output.ts";
import { bossDatabase } from "./pg-boss-queue.ts";
import { openPostgresTasks, type PostgresTaskBackendOptions } from "./postgres-task-backend.ts";
import { DEFAULT_OUTPUT_LIMIT_BYTES } from "./postgres-task-output-store.ts";
import { updateTask } from "./postgres-task-state-store.ts";
import { reconcileLapsedLeases } from "./reconcile-leases.ts";
import { CHANNELS, MILLISECONDS } from "./task-tables.ts";

export interface TaskWorkerOptions extends PostgresTaskBackendOptions {
  /** Where the tasks it runs keep their local folders (output first goes to a file here). */
  dir: string;
  /** The types it runs (portable ones: `BUILT_IN_TASK_TYPES` filtered, or your `defineTaskType`s). */
  types: readonly TaskTypeDefinition[];
  /** How many tasks it runs at once (default 4). */
  concurrency?: number;
  /** What commands inherit from this process's environment (see `createTaskExecutor`). */
  environment?: { allow?: readonly string[]; base?: readonly string[] };
  /** How often an idle worker looks for jobs when no NOTIFY arrives (default 1 000 ms). */
  pollMs?: number;
  stall?: StallOptions;
  /** Between SIGTERM and SIGKILL when a task is stopped (default 3 000). */
  graceMs?: number;
  /** Failures in the background (a lost connection in the reconciler); defaults to `process.emitWarning`. */
  onError?: (error: UnforgetError) => void;
}

/** A process that runs queued tasks; any number of them, on any machines, share the queue. */
export interface TaskWorker {
  /** Its owner id (the lease it renews). */
  readonly id: string;
  /** Tasks it runs now. */
  readonly running: number;
  /** Stops taking jobs and gives up its running tasks (ended here, run again elsewhere); releases its lease. */
  close(): Promise<void>;
}

interface ClaimRow {
  version: number;
  record: TaskRecordInit;
  spec: PortableTaskSpec | null;
  attempt: number;
}

/**
 * Claims the task of a job for `owner`: the next attempt, its lease, and a record that names the worker, in
 * one transaction. Undefined when there is nothing to run (it ended, or was stopped while it waited).
 */
async function claimTask(
  database: SqlQueryable,
  taskId: string,
  jobId: string,
  owner: TaskRecord["owner"],
  leaseMs: number,
): Promise<{ record: TaskRecord; spec: PortableTaskSpec } | undefined> {
  const found = await database.query<ClaimRow>(
    "SELECT version, record, spec, attempt FROM unforget_task WHERE id = $1 FOR UPDATE",
    [taskId],
  );
  const row = found.rows[0];
  if (row === undefined || row.spec === null || row.record.status !== "running") return undefined;
  const attempt = Number(row.attempt) + 1;
  const next: TaskRecordInit = {
    ...row.record,
    owner,
    attempt,
    process: undefined,
    outputLostAfter: undefined,
  };
  const record = await updateTask(database, taskId, Number(row.version), next, randomUUID());
  if (record === undefined) return undefined;
  await database.query(
    `UPDATE unforget_task SET lease_until = now() + $2 ${MILLISECONDS}, job_id = $3 WHERE id = $1`,
    [taskId, leaseMs, jobId],
  );
  return { record, spec: row.spec };
}

/**
 * Starts a worker: it registers the types it runs, takes jobs from their pg-boss queues (woken by NOTIFY,
 * polling as a fallback), runs each claimed task with `createTaskExecutor` (local file first, output shipped,
 * lease renewed every third of the lease, writes fenced by attempt), completes the job once the end is
 * recorded, and reconciles tasks whose worker's lease lapsed so that they run again elsewhere.
 */
export async function createTaskWorker(options: TaskWorkerOptions): Promise<TaskWorker> {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new TaskInputError(`concurrency: a whole number ≥ 1 (got ${String(concurrency)}).`, {
      field: "concurrency",
    });
  }
  const unportable = options.types.filter((type) => type.toPortable === undefined).map((type) => type.type);
  if (unportable.length > 0) {
    throw new TaskInputError(
      `types: ${unportable.join(", ")} never leave the process that starts them, so no worker runs them; pass only portable types.`,
      { field: "types" },
    );
  }
  const pollMs = options.pollMs ?? 1_000;
  const tasks = await openPostgresTasks(options, { supervise: true });
  const { client, boss, leaseMs, bound } = tasks;
  const outputLimit = options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
  const reportError =
    options.onError ??
    ((error: UnforgetError) => {
      process.emitWarning(error.message, { code: error.code });
    });
  const executor = await createTaskExecutor({
    dir: options.dir,
    backend: tasks.backend,
    types: options.types,
    environment: options.environment,
    stall: options.stall,
    graceMs: options.graceMs,
    onError: options.onError,
  });
  const ownerId = executor.owner.managerId;
  await client.query("UPDATE unforget_task_owner SET types = $2 WHERE id = $1", [ownerId, executor.types]);
  const queues = await Promise.all(executor.types.map((type) => tasks.ensureQueue(type)));

  let closed = false;
  let running = 0;
  let wake: (() => void) | undefined;
  const idle = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  tasks.onNotice(CHANNELS.queue, (queue) => {
    if (queues.includes(queue)) wake?.();
  });

  type Claimed = { queue: string; jobId: string; record: TaskRecord; spec: PortableTaskSpec };
  let next = 0;
  /**
   * Takes the next job of its queues and claims its task in one transaction: a worker that dies in between
   * leaves neither an active job without an owner nor an owner without a job. A job whose task has nothing
   * to run (it ended, or was stopped while it waited) is completed in the same transaction.
   */
  const claimNext = async (): Promise<Claimed | "idle" | "skipped"> => {
    for (let tried = 0; tried < queues.length; tried++) {
      const queue = queues[(next + tried) % queues.length]!;
      const outcome = await client.transaction(
        async (transaction): Promise<Claimed | "skipped" | undefined> => {
          const db = bossDatabase(transaction);
          const [job] = await boss.fetch<{ taskId: string }>(queue, { batchSize: 1, db });
          if (job === undefined) return undefined;
          const claimed = await claimTask(transaction, job.data.taskId, job.id, executor.owner, leaseMs);
          if (claimed === undefined) {
            await boss.complete(queue, job.id, { db });
            return "skipped";
          }
          return { queue, jobId: job.id, ...claimed };
        },
        bound,
      );
      if (outcome !== undefined) {
        next = (next + tried + 1) % queues.length;
        return outcome;
      }
    }
    return "idle";
  };

  const runJob = async ({ queue, jobId, record, spec }: Claimed) => {
    await setAsideEarlierAttempt(options.dir, record.id);
    const final = await executor.run(record, spec);
    // Given up (the lease lapsed and the task moved on): the job is the next owner's now.
    if (final.status === "running" || final.owner?.managerId !== ownerId || final.attempt !== record.attempt)
      return;
    await boss.complete(queue, jobId);
  };

  const slot = async () => {
    while (!closed) {
      try {
        const found = await claimNext();
        if (found === "idle") {
          await idle();
          continue;
        }
        if (found === "skipped") continue;
        running += 1;
        try {
          await runJob(found);
        } finally {
          running -= 1;
        }
      } catch (error) {
        reportError(asUnforgetError(error));
        if (!closed) await idle();
      }
    }
  };
  const slots = Array.from({ length: concurrency }, () => slot());

  // Output that attempts lost in this folder left (a worker killed or closed here before): shipped once each
  // attempt is over and its command has ended, looked at with every reconciler round until none is left.
  let leftPending = true;
  let leftBusy = false;
  let leftRun: Promise<void> = Promise.resolve();
  const shipLeft = () => {
    if (!leftPending || leftBusy || closed) return;
    leftBusy = true;
    leftRun = (async () => {
      try {
        const running = await setAsideLeftOutput(client, options.dir, ownerId);
        leftPending = running + (await shipLeftOutput(client, options.dir, outputLimit)) > 0;
      } catch (error) {
        reportError(asUnforgetError(error));
      } finally {
        leftBusy = false;
      }
    })();
  };
  shipLeft();
  const reconcile = setInterval(
    () => {
      if (closed) return;
      reconcileLapsedLeases(client, boss, bound).catch((error: unknown) =>
        reportError(asUnforgetError(error)),
      );
      shipLeft();
    },
    Math.max(250, Math.floor(leaseMs / 3)),
  );
  reconcile.unref();

  return {
    id: ownerId,
    get running() {
      return running;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(reconcile);
      wake?.();
      await executor.close();
      await Promise.all(slots);
      await leftRun;
      await tasks.backend.close();
    },
  };
}

function asUnforgetError(error: unknown): UnforgetError {
  if (error instanceof UnforgetError) return error;
  return new TaskStoreError(
    `The task worker failed in the background (${error instanceof Error ? error.message : String(error)}); it goes on.`,
    { cause: error },
  );
}
