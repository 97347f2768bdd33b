import { checkSchema, runMigrations, type SqlClient, type SqlSubscription } from "@unforget/postgres";
import {
  type PortableTaskSpec,
  type TaskBackend,
  TaskInputError,
  type TaskRecord,
  type TaskRecordInit,
} from "@unforget/tasks";
import type PgBoss from "pg-boss";
import { bossDatabase, createQueues, startBoss } from "./pg-boss-queue.ts";
import { createMailWakeups, createPostgresMailbox, type MailWakeups } from "./postgres-mailbox.ts";
import { createPostgresTaskCommands } from "./postgres-task-commands.ts";
import { createPostgresTaskLeases, DEFAULT_LEASE_MS } from "./postgres-task-leases.ts";
import { createPostgresTaskOutputStore } from "./postgres-task-output-store.ts";
import { createPostgresTaskStateStore, insertTask } from "./postgres-task-state-store.ts";
import {
  CHANNELS,
  MILLISECONDS,
  queueName,
  type TransactionBound,
  taskMigrations,
  transactionBound,
} from "./task-tables.ts";

/** pg-boss's `expireInSeconds` must stay under 24 h; a queued task must end well within it. */
export const MAX_RUN_MS = 23 * 3_600_000;
/** The largest portable spec (as JSON) a queue takes: specs are commands and settings, not data. */
export const MAX_SPEC_BYTES = 65_536;
/** Time a worker gets beyond a task's timeout before pg-boss itself expires the job. */
const EXPIRY_MARGIN_S = 300;

/** One thing that looks like a secret (the shape of `@unforget/memory`'s scanner findings). */
export interface SecretFinding {
  rule: string;
  message: string;
}

export interface PostgresTaskBackendOptions {
  /** The database (`createSqlClient` from `@unforget/postgres`): a server, or PGlite in this process. */
  client: SqlClient;
  /** Apply the tasks schema's migrations when needed (default true); false checks that an operator did. */
  migrate?: boolean;
  /** How long an owner's lease lasts after its last heartbeat (default 30 000 ms; renewed every third). */
  leaseMs?: number;
  /** How many times a task whose worker was lost is run again elsewhere (default 2). */
  retryLimit?: number;
  /** The most output one attempt keeps; past it the task stops with reason `output_limit` (default 1 GiB). */
  outputLimitBytes?: number;
  /** How often a running task's growing output is committed (default 1 000 ms, or each full 256 KiB). */
  shipIntervalMs?: number;
  /**
   * Checks a spec's command and environment before it is queued (e.g. `createSecretScanner()` from
   * `@unforget/memory`): a finding refuses the spec with `TaskInputError`, and nothing is stored.
   */
  secretScanner?: { scan(text: string): Promise<SecretFinding[]> };
}

/** A backend on PostgreSQL; `close()` stops its queue and listeners (the client stays the caller's). */
export interface PostgresTaskBackend extends TaskBackend {
  close(): Promise<void>;
}

/** What a worker needs beyond the backend: the queue engine and the wake-ups. */
export interface PostgresTasks {
  backend: PostgresTaskBackend;
  boss: PgBoss;
  client: SqlClient;
  leaseMs: number;
  /** How long each of its transactions may take (half a lease), for the worker's own. */
  bound: TransactionBound;
  /** Ensures the pg-boss queue of a type exists (once per process). */
  ensureQueue(type: string): Promise<string>;
  /** Calls `listener` with the payload of each NOTIFY on `channel` (a hint: also poll). */
  onNotice(channel: string, listener: (payload: string) => void): void;
}

/** The texts of a spec that could carry a secret: the command(s), and every environment value. */
function secretCandidates(spec: PortableTaskSpec): { field: string; text: string }[] {
  const found: { field: string; text: string }[] = [];
  const visit = (value: unknown, field: string): void => {
    if (typeof value === "string") found.push({ field, text: value });
    else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, `${field}[${index}]`);
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) visit(item, `${field}.${key}`);
    }
  };
  for (const key of ["command", "check", "env", "steps"]) visit(spec[key], key);
  return found;
}

async function scanSpec(
  scanner: PostgresTaskBackendOptions["secretScanner"],
  spec: PortableTaskSpec,
): Promise<void> {
  if (scanner === undefined) return;
  for (const { field, text } of secretCandidates(spec)) {
    const [finding] = await scanner.scan(text);
    if (finding !== undefined) {
      throw new TaskInputError(
        `${field}: looks like a secret (${finding.rule}: ${finding.message}); a queued spec is stored in the database and read by workers. Put the secret in the worker's environment and name it in envFrom instead.`,
        { field },
      );
    }
  }
}

/**
 * Openings in progress, per client. PGlite is one connection, and pg-boss's migrations send their own BEGIN
 * and COMMIT: two openings at once on it would interleave inside one transaction. One at a time is enough.
 */
const openings = new WeakMap<SqlClient, Promise<unknown>>();

/** Opens everything a manager or a worker uses on the database (one opening at a time per client). */
export function openPostgresTasks(
  options: PostgresTaskBackendOptions,
  role: { supervise: boolean },
): Promise<PostgresTasks> {
  const previous = openings.get(options.client) ?? Promise.resolve();
  const opened = previous.catch(() => undefined).then(() => open(options, role));
  openings.set(options.client, opened);
  return opened;
}

/** LISTENs on every channel once; `onNotice` adds a listener for one of them. */
async function listenToNotices(
  client: SqlClient,
): Promise<{ subscriptions: SqlSubscription[]; onNotice: PostgresTasks["onNotice"] }> {
  const listeners = new Map<string, Set<(payload: string) => void>>();
  const subscriptions: SqlSubscription[] = [];
  const onNotice = (channel: string, listener: (payload: string) => void) => {
    const set = listeners.get(channel) ?? new Set();
    listeners.set(channel, set);
    set.add(listener);
  };
  for (const channel of Object.values(CHANNELS)) {
    subscriptions.push(
      await client.listen(channel, (payload) => {
        for (const listener of listeners.get(channel) ?? []) listener(payload);
      }),
    );
  }
  return { subscriptions, onNotice };
}

/** Creates a type's pg-boss queue the first time it is asked for (again after a failed try). */
function createQueueEnsurer(
  client: SqlClient,
  boss: PgBoss,
  retryLimit: number,
): PostgresTasks["ensureQueue"] {
  const queues = new Map<string, Promise<string>>();
  return (type: string) => {
    let ready = queues.get(type);
    if (ready === undefined) {
      const name = queueName(type);
      ready = createQueues(client, boss, [name], { retryLimit }).then(() => name);
      ready.catch(() => queues.delete(type));
      queues.set(type, ready);
    }
    return ready;
  };
}

/** What queueing a task needs: the database, the queue engine and its settings. */
interface QueueContext {
  client: SqlClient;
  boss: PgBoss;
  bound: TransactionBound;
  retryLimit: number;
  secretScanner: PostgresTaskBackendOptions["secretScanner"];
  ensureQueue: PostgresTasks["ensureQueue"];
}

/**
 * Stores a task and sends its job in one transaction, then NOTIFYs the workers. The spec is refused when it
 * is too large or looks like it carries a secret; a retried transaction whose first COMMIT went through
 * returns the task already queued.
 */
async function enqueueTask(
  context: QueueContext,
  record: TaskRecordInit,
  spec: PortableTaskSpec,
): Promise<TaskRecord> {
  const { client, boss, bound, retryLimit } = context;
  const specBytes = Buffer.byteLength(JSON.stringify(spec));
  if (specBytes > MAX_SPEC_BYTES) {
    throw new TaskInputError(
      `spec: ${specBytes} bytes as JSON, over the queue's ${MAX_SPEC_BYTES}; put large inputs in a file the command reads (or in the database) and pass its path.`,
      { field: "spec" },
    );
  }
  await scanSpec(context.secretScanner, spec);
  const queue = await context.ensureQueue(spec.type);
  const runMs = record.timeoutMs ?? MAX_RUN_MS;
  return client.transaction(async (transaction) => {
    const existing = await transaction.query<{ version: number; record: TaskRecordInit }>(
      "SELECT version, record FROM unforget_task WHERE id = $1",
      [record.id],
    );
    const row = existing.rows[0];
    // A retried transaction whose first COMMIT went through: the task is queued already.
    if (row !== undefined) return { ...row.record, version: Number(row.version) };
    const created = await insertTask(transaction, record, { spec, queue });
    const jobId = await boss.send(
      queue,
      { taskId: record.id },
      {
        db: bossDatabase(transaction),
        retryLimit,
        expireInSeconds: Math.ceil(runMs / 1000) + EXPIRY_MARGIN_S,
      },
    );
    await transaction.query("UPDATE unforget_task SET job_id = $2 WHERE id = $1", [record.id, jobId]);
    await transaction.query("SELECT pg_notify($1, $2)", [CHANNELS.queue, queue]);
    return created;
  }, bound);
}

/** How many workers with a live lease run `type`. */
async function countLiveWorkers(client: SqlClient, leaseMs: number, type: string): Promise<number> {
  const result = await client.query<{ workers: string | number }>(
    `SELECT count(*) AS workers FROM unforget_task_owner
     WHERE $1 = ANY(types) AND heartbeat_at + $2 ${MILLISECONDS} > now()`,
    [type, leaseMs],
  );
  return Number(result.rows[0]?.workers ?? 0);
}

async function open(
  options: PostgresTaskBackendOptions,
  role: { supervise: boolean },
): Promise<PostgresTasks> {
  const { client } = options;
  const set = await taskMigrations();
  if (options.migrate === false) await checkSchema(client, set);
  else await runMigrations(client, set);
  const boss = await startBoss(client, role);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const retryLimit = options.retryLimit ?? 2;
  const { subscriptions, onNotice } = await listenToNotices(client);
  const wakeups: MailWakeups = createMailWakeups();
  onNotice(CHANNELS.mail, (address) => wakeups.wake(address));
  const bound = transactionBound(leaseMs);
  const ensureQueue = createQueueEnsurer(client, boss, retryLimit);
  const queueContext: QueueContext = {
    client,
    boss,
    bound,
    retryLimit,
    secretScanner: options.secretScanner,
    ensureQueue,
  };
  let closed = false;
  const backend: PostgresTaskBackend = {
    store: createPostgresTaskStateStore(client, bound),
    output: createPostgresTaskOutputStore(client, {
      limitBytes: options.outputLimitBytes,
      shipIntervalMs: options.shipIntervalMs,
    }),
    leases: createPostgresTaskLeases(client, leaseMs),
    commands: createPostgresTaskCommands(client, bound),
    mailbox: createPostgresMailbox(client, wakeups, bound),
    queue: {
      maxRunMs: MAX_RUN_MS,
      liveWorkers: (type) => countLiveWorkers(client, leaseMs, type),
      enqueue: (record, spec) => enqueueTask(queueContext, record, spec),
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const subscription of subscriptions) await subscription.close().catch(() => undefined);
      await boss.stop({ graceful: false, close: false, wait: true }).catch(() => undefined);
    },
  };
  return { backend, boss, client, leaseMs, bound, ensureQueue, onNotice };
}

/**
 * The task backend on PostgreSQL, for `createTaskManager({ backend })`: records, output, leases, commands
 * and the mailbox in tables, and a pg-boss queue per task type. A manager on it runs nothing itself: it
 * queues portable specs for `createTaskWorker`s on any machine and reads their state and output.
 */
export async function createPostgresTaskBackend(
  options: PostgresTaskBackendOptions,
): Promise<PostgresTaskBackend> {
  return (await openPostgresTasks(options, { supervise: false })).backend;
}
