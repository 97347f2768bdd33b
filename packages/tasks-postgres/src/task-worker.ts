import { randomUUID } from "node:crypto";
import { UnforgetError } from "@unforget/core";
import type { SqlQueryable } from "@unforget/postgres";
import {
  createTaskExecutor,
  type PortableTaskSpec,
  type StallOptions,
  type TaskExecutor,
  TaskInputError,
  type TaskRecord,
  type TaskRecordInit,
  TaskStoreError,
  type TaskTypeDefinition,
} from "@unforget/tasks";
import { setAsideEarlierAttempt, setAsideLeftOutput, shipLeftOutput } from "./left-output.ts";
import { bossDatabase } from "./pg-boss-queue.ts";
import {
  openPostgresTasks,
  type PostgresTaskBackendOptions,
  type PostgresTasks,
} from "./postgres-task-backend.ts";
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

/** Refuses a concurrency that is not a whole number ≥ 1 and types that never leave their process. */
function checkWorkerOptions(options: TaskWorkerOptions): number {
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
  return concurrency;
}

type Claimed = { queue: string; jobId: string; record: TaskRecord; spec: PortableTaskSpec };

/** What a running worker holds: its database handles, its executor and queues, and its loop state. */
interface WorkerState {
  readonly dir: string;
  readonly tasks: PostgresTasks;
  readonly executor: TaskExecutor;
  readonly ownerId: string;
  readonly queues: readonly string[];
  readonly pollMs: number;
  readonly outputLimit: number;
  readonly reportError: (error: UnforgetError) => void;
  closed: boolean;
  /** Tasks it runs now. */
  running: number;
  /** Ends the current idle wait early (a NOTIFY for one of its queues, or close). */
  wake: (() => void) | undefined;
  /** The queue to look at first next time: the queues take turns. */
  next: number;
  /**
   * Output that attempts lost in this folder left (a worker killed or closed here before): shipped once each
   * attempt is over and its command has ended, looked at with every reconciler round until none is left.
   */
  left: { pending: boolean; busy: boolean; run: Promise<void> };
}

/** Waits `pollMs`, or less when `wake` is called. */
function idle(state: WorkerState): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, state.pollMs);
    function done() {
      clearTimeout(timer);
      state.wake = undefined;
      resolve();
    }
    state.wake = done;
  });
}

/**
 * Takes the next job of its queues and claims its task in one transaction: a worker that dies in between
 * leaves neither an active job without an owner nor an owner without a job. A job whose task has nothing
 * to run (it ended, or was stopped while it waited) is completed in the same transaction.
 */
async function claimNext(state: WorkerState): Promise<Claimed | "idle" | "skipped"> {
  const { queues, tasks } = state;
  const { boss } = tasks;
  for (let tried = 0; tried < queues.length; tried++) {
    const queue = queues[(state.next + tried) % queues.length]!;
    const outcome = await tasks.client.transaction(
      async (transaction): Promise<Claimed | "skipped" | undefined> => {
        const db = bossDatabase(transaction);
        const [job] = await boss.fetch<{ taskId: string }>(queue, { batchSize: 1, db });
        if (job === undefined) return undefined;
        const claimed = await claimTask(
          transaction,
          job.data.taskId,
          job.id,
          state.executor.owner,
          tasks.leaseMs,
        );
        if (claimed === undefined) {
          await boss.complete(queue, job.id, { db });
          return "skipped";
        }
        return { queue, jobId: job.id, ...claimed };
      },
      tasks.bound,
    );
    if (outcome !== undefined) {
      state.next = (state.next + tried + 1) % queues.length;
      return outcome;
    }
  }
  return "idle";
}

/** Runs a claimed task and completes its job, unless the task was given up (its job is the next owner's). */
async function runJob(state: WorkerState, { queue, jobId, record, spec }: Claimed): Promise<void> {
  await setAsideEarlierAttempt(state.dir, record.id);
  const final = await state.executor.run(record, spec);
  // Given up (the lease lapsed and the task moved on): the job is the next owner's now.
  if (
    final.status === "running" ||
    final.owner?.managerId !== state.ownerId ||
    final.attempt !== record.attempt
  )
    return;
  await state.tasks.boss.complete(queue, jobId);
}

/** One of `concurrency` loops: claim a job, run it, repeat until closed; idle when there is none. */
async function runSlot(state: WorkerState): Promise<void> {
  while (!state.closed) {
    try {
      const found = await claimNext(state);
      if (found === "idle") {
        await idle(state);
        continue;
      }
      if (found === "skipped") continue;
      state.running += 1;
      try {
        await runJob(state, found);
      } finally {
        state.running -= 1;
      }
    } catch (error) {
      state.reportError(asUnforgetError(error));
      if (!state.closed) await idle(state);
    }
  }
}

/** Ships the output earlier attempts left in this folder, one round at a time, while any is left. */
function shipLeft(state: WorkerState): void {
  const { left, tasks } = state;
  if (!left.pending || left.busy || state.closed) return;
  left.busy = true;
  left.run = (async () => {
    try {
      const running = await setAsideLeftOutput(tasks.client, state.dir, state.ownerId);
      left.pending = running + (await shipLeftOutput(tasks.client, state.dir, state.outputLimit)) > 0;
    } catch (error) {
      state.reportError(asUnforgetError(error));
    } finally {
      left.busy = false;
    }
  })();
}

/** Every third of the lease: reconciles tasks whose worker's lease lapsed, and ships left output. */
function startReconciler(state: WorkerState): NodeJS.Timeout {
  const { tasks } = state;
  const reconcile = setInterval(
    () => {
      if (state.closed) return;
      reconcileLapsedLeases(tasks.client, tasks.boss, tasks.bound).catch((error: unknown) =>
        state.reportError(asUnforgetError(error)),
      );
      shipLeft(state);
    },
    Math.max(250, Math.floor(tasks.leaseMs / 3)),
  );
  reconcile.unref();
  return reconcile;
}

/**
 * Starts a worker: it registers the types it runs, takes jobs from their pg-boss queues (woken by NOTIFY,
 * polling as a fallback), runs each claimed task with `createTaskExecutor` (local file first, output shipped,
 * lease renewed every third of the lease, writes fenced by attempt), completes the job once the end is
 * recorded, and reconciles tasks whose worker's lease lapsed so that they run again elsewhere.
 */
export async function createTaskWorker(options: TaskWorkerOptions): Promise<TaskWorker> {
  const concurrency = checkWorkerOptions(options);
  const tasks = await openPostgresTasks(options, { supervise: true });
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
  await tasks.client.query("UPDATE unforget_task_owner SET types = $2 WHERE id = $1", [
    ownerId,
    executor.types,
  ]);
  const queues = await Promise.all(executor.types.map((type) => tasks.ensureQueue(type)));
  const state: WorkerState = {
    dir: options.dir,
    tasks,
    executor,
    ownerId,
    queues,
    pollMs: options.pollMs ?? 1_000,
    outputLimit: options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES,
    reportError:
      options.onError ??
      ((error: UnforgetError) => {
        process.emitWarning(error.message, { code: error.code });
      }),
    closed: false,
    running: 0,
    wake: undefined,
    next: 0,
    left: { pending: true, busy: false, run: Promise.resolve() },
  };
  tasks.onNotice(CHANNELS.queue, (queue) => {
    if (queues.includes(queue)) state.wake?.();
  });
  const slots = Array.from({ length: concurrency }, () => runSlot(state));
  shipLeft(state);
  const reconcile = startReconciler(state);

  return {
    id: ownerId,
    get running() {
      return state.running;
    },
    async close() {
      if (state.closed) return;
      state.closed = true;
      clearInterval(reconcile);
      state.wake?.();
      await executor.close();
      await Promise.all(slots);
      await state.left.run;
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
