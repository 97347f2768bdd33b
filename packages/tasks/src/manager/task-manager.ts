import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import type { UnforgetError } from "@unforget/core";
import type { SessionHooks } from "@unforget/hooks";
import { createFileTaskBackend } from "../backend/file-task-backend.ts";
import { DEFAULT_LEASE_MS } from "../backend/file-task-leases.ts";
import type { TaskBackend } from "../backend/task-backend.ts";
import type { TaskStateStore } from "../backend/task-state-store.ts";
import { INTERACTIVE_PROMPT_PATTERNS, type PromptPattern } from "../lifecycle/prompt-patterns.ts";
import { reconcileAll } from "../lifecycle/reconcile-tasks.ts";
import { stopForeignTask, writeToForeignTask } from "../lifecycle/stop-foreign-task.ts";
import { stopLiveTask } from "../lifecycle/task-lifecycle.ts";
import { NO_WORKER_MS, startWatchdog } from "../lifecycle/task-watchdog.ts";
import type { Mailbox } from "../mailbox/mailbox.ts";
import { MIN_CHUNK_BYTES, type OutputChunk } from "../output/task-output.ts";
import { TaskInputError, TaskStateError } from "../task/task-errors.ts";
import type { TaskInfo } from "../task/task-info.ts";
import type { TaskNotification } from "../task/task-notification.ts";
import { isFinalStatus } from "../task/task-record.ts";
import type { TaskSpec } from "../task/task-spec.ts";
import { BUILT_IN_TASK_TYPES } from "../types/built-in-task-types.ts";
import type { ConnectMcp } from "../types/task-capabilities.ts";
import { type CustomTaskSpec, createTaskTypeRegistry, type TaskTypeDefinition } from "../types/task-type.ts";
import { checkDuration } from "../types/validate-task-spec.ts";
import { createOwner, type ManagerState } from "./manager-state.ts";
import { readTaskOutput } from "./read-task-output.ts";
import { startTask } from "./start-task.ts";
import { takeNotifications } from "./take-notifications.ts";
import { createTaskEvents } from "./task-events.ts";
import { describeTask, requireRecord } from "./task-lookup.ts";
import { createTaskRecords } from "./task-records.ts";
import { waitForTask } from "./wait-for-task.ts";

/** When to suspect that a quiet task waits for input. */
export interface StallOptions {
  /** How often running tasks are checked (default 5 000). */
  intervalMs?: number;
  /** Output quiet for this long is checked for a prompt (default 45 000). */
  quietMs?: number;
  /** How much of the output's end is read and matched (default 500 bytes). */
  tailBytes?: number;
  /** Prompt patterns, most specific first (default `INTERACTIVE_PROMPT_PATTERNS`). */
  patterns?: readonly PromptPattern[];
}

export interface TaskManagerOptions {
  /**
   * The directory of task folders (state, output, exit status). Created if missing; shareable by managers.
   * Required unless `backend` queues the tasks for workers (then nothing runs here).
   */
  dir?: string;
  /** Where records, output, leases, commands and the mailbox live (default: the file backend on `dir`). */
  backend?: TaskBackend;
  /** The task types `start()` accepts (default `BUILT_IN_TASK_TYPES`); add yours with `defineTaskType`. */
  types?: readonly TaskTypeDefinition[];
  /**
   * How a `monitor_mcp` task with a `command` speaks MCP to its server: pass `createMcpStdioClient` of
   * `@unforget/mcp`. Without it such a task is refused with a `TaskInputError` (tasks carries no MCP client).
   */
  connectMcp?: ConnectMcp;
  /** The session's hook bus: task events are fired on it (see `getTaskHooks`). */
  hooks?: SessionHooks;
  /** Stamped on the events fired on `hooks` (default ""). */
  sessionId?: string;
  stall?: StallOptions;
  /** Default deadline of every task, after which it notifies once if still running (default 600 000 = 10 min). */
  deadlineMs?: number;
  /** Between SIGTERM and SIGKILL when a task is stopped (default 3 000). */
  graceMs?: number;
  /** Largest chunk `readOutput` returns (default 262 144 bytes). */
  readChunkBytes?: number;
  /** How often a task re-attached after a restart is checked for its end, and commands are read (default 500). */
  pollMs?: number;
  /** With a queue: how long a task waits with no live worker for its type before it notifies `no_worker` (default 60 000). */
  noWorkerMs?: number;
  /** Where task records live (default: the backend's store). */
  store?: TaskStateStore;
  /** The mailbox for agents and teammates (default: the backend's, durable). */
  mailbox?: Mailbox;
  /** The lease of the default file backend (default 30 000 ms); a manager renews it every third. */
  leaseMs?: number;
  /** Receives failures that happen in the background (a state write in a timer); defaults to `process.emitWarning`. */
  onError?: (error: UnforgetError) => void;
}

export interface ReadOutputOptions {
  /** Largest chunk to return, in bytes (at least 4; default and maximum: the manager's `readChunkBytes`). */
  maxBytes?: number;
  /** An earlier attempt of a task a queue ran again (default: the latest); its output stays readable. */
  attempt?: number;
}

export interface WriteOptions {
  /** Close the task's stdin after writing (the command sees end of input). */
  end?: boolean;
}

/** Runs background tasks (or queues them for workers) whose output and state live in its backend. */
export interface TaskManager {
  /** The directory its tasks run in; undefined for a manager that queues tasks for workers. */
  readonly dir: string | undefined;
  /**
   * Starts a task; resolves with its id once its record is stored and its work has begun (or, with a
   * queue, once record and job are stored). Rejects with `TaskInputError` or `TaskNotPortableError` and
   * stores nothing when the spec cannot run.
   */
  start(spec: TaskSpec | CustomTaskSpec): Promise<string>;
  /**
   * Sends input: to a local_bash task's stdin, to an agent's or teammate's mailbox. A task run by another
   * manager or a worker gets it as a command; resolves once its owner has written it.
   */
  write(id: string, input: string, options?: WriteOptions): Promise<void>;
  /** Ends a task (its whole process group: SIGTERM, SIGKILL after the grace period); resolves with its final state. */
  stop(id: string): Promise<TaskInfo>;
  /** One task, as it stands now. */
  get(id: string): Promise<TaskInfo>;
  /** Every task in the backend, oldest first: this manager's, other managers', and ended ones. */
  list(): Promise<TaskInfo[]>;
  /** Reads the output from a byte offset, like `tail -f`; any number of readers, each with its own offset. */
  readOutput(id: string, offset?: number, options?: ReadOutputOptions): Promise<OutputChunk>;
  /** Returns the notifications raised since the last call, oldest first, and clears them. */
  takeNotifications(): Promise<TaskNotification[]>;
  /** Resolves once the task has ended (or rejects with `TaskStateError` after `timeoutMs`). */
  wait(id: string, options?: { timeoutMs?: number }): Promise<TaskInfo>;
  /** Stops the timers and lets the tasks run on; a manager opened later on `dir` re-attaches them. */
  close(): Promise<void>;
}

const DEFAULTS = {
  intervalMs: 5_000,
  quietMs: 45_000,
  tailBytes: 500,
  deadlineMs: 600_000,
  graceMs: 3_000,
  readChunkBytes: 262_144,
  pollMs: 500,
};

function checkOptions(options: TaskManagerOptions): void {
  const needsDir = options?.backend?.queue === undefined;
  if (options?.dir !== undefined || needsDir) {
    if (typeof options?.dir !== "string" || options.dir === "") {
      throw new TaskInputError(
        "dir: createTaskManager needs the directory that holds the task folders (or a backend with a queue).",
        { field: "dir" },
      );
    }
  }
  if (options.connectMcp !== undefined && typeof options.connectMcp !== "function") {
    throw new TaskInputError(
      "connectMcp: must be a function that opens an MCP client over a server's pipes, such as createMcpStdioClient of @unforget/mcp.",
      { field: "connectMcp" },
    );
  }
  checkDuration(options.leaseMs, "leaseMs");
  checkDuration(options.stall?.intervalMs, "stall.intervalMs");
  checkDuration(options.stall?.quietMs, "stall.quietMs", { min: 0 });
  checkDuration(options.stall?.tailBytes, "stall.tailBytes");
  checkDuration(options.deadlineMs, "deadlineMs", { infinite: true });
  checkDuration(options.graceMs, "graceMs", { min: 0 });
  checkDuration(options.readChunkBytes, "readChunkBytes", { min: MIN_CHUNK_BYTES });
  checkDuration(options.pollMs, "pollMs");
  checkDuration(options.noWorkerMs, "noWorkerMs");
}

/** The shared state of a manager (or an executor on a worker) from its options. */
export function createState(options: TaskManagerOptions): ManagerState {
  const defaults = () =>
    createFileTaskBackend({ dir: options.dir!, leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS });
  const base = options.backend ?? defaults();
  const backend: TaskBackend = {
    ...base,
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.mailbox === undefined ? {} : { mailbox: options.mailbox }),
  };
  return {
    dir: options.backend?.queue === undefined ? options.dir : undefined,
    backend,
    types: createTaskTypeRegistry(options.types ?? BUILT_IN_TASK_TYPES),
    capabilities: options.connectMcp === undefined ? {} : { connectMcp: options.connectMcp },
    sessionId: options.sessionId ?? "",
    records: createTaskRecords(backend.store),
    owner: createOwner(randomUUID()),
    mailbox: backend.mailbox,
    events: createTaskEvents(options.hooks, options.sessionId ?? ""),
    graceMs: options.graceMs ?? DEFAULTS.graceMs,
    deadlineMs: options.deadlineMs ?? DEFAULTS.deadlineMs,
    pollMs: options.pollMs ?? DEFAULTS.pollMs,
    noWorkerMs: options.noWorkerMs ?? NO_WORKER_MS,
    readChunkBytes: options.readChunkBytes ?? DEFAULTS.readChunkBytes,
    stall: {
      intervalMs: options.stall?.intervalMs ?? DEFAULTS.intervalMs,
      quietMs: options.stall?.quietMs ?? DEFAULTS.quietMs,
      tailBytes: options.stall?.tailBytes ?? DEFAULTS.tailBytes,
      patterns: options.stall?.patterns ?? INTERACTIVE_PROMPT_PATTERNS,
    },
    reportError:
      options.onError ??
      ((error) => {
        process.emitWarning(error.message, { code: error.code });
      }),
    live: new Map(),
    processes: new Map(),
    responsible: new Set(),
    foreign: new Set(),
    lastRenewedAt: Date.now(),
    closed: false,
  };
}

/** Releases this manager's tasks to the next manager on `dir`; the processes keep running. */
async function closeManager(state: ManagerState): Promise<void> {
  const release = (id: string, ended: boolean) =>
    state.records.mutate(id, (record) =>
      isFinalStatus(record.status) !== ended || record.owner?.managerId !== state.owner.managerId
        ? undefined
        : { ...record, owner: undefined },
    );
  for (const live of state.live.values()) {
    for (const timer of live.timers) clearTimeout(timer);
    if (live.runner.release === undefined) continue;
    live.runner.release();
    // Released: the next manager on this directory adopts it without waiting for this process to end.
    await release(live.id, false);
  }
  // Notifications nobody took: any manager opened later delivers them.
  for (const id of state.responsible) await release(id, true);
  await state.backend.leases.release(state.owner);
}

async function writeToTask(state: ManagerState, id: string, input: string, end: boolean): Promise<void> {
  if (typeof input !== "string") {
    throw new TaskInputError(`input: write() takes a string (got ${typeof input}).`, { field: "input" });
  }
  const live = state.live.get(id);
  const record = await requireRecord(state, id, live === undefined);
  if (live === undefined) return writeToForeignTask(state, record, input, end);
  if (live.runner.write === undefined) {
    throw new TaskStateError(`Task ${id} is a ${record.type} task, which takes no input.`, { taskId: id });
  }
  await live.runner.write(input, end);
}

/**
 * Opens a task manager on `dir`. Before it resolves, it reconciles what it finds there: a running task
 * whose manager has died is re-attached (by pid and process start time) or, when its process is gone,
 * recorded with how it ended; notifications nobody took are delivered again.
 */
export async function createTaskManager(options: TaskManagerOptions): Promise<TaskManager> {
  checkOptions(options);
  if (options.dir !== undefined) await mkdir(options.dir, { recursive: true });
  const state = createState(options);
  // The lease exists before this manager owns anything, so no other manager mistakes its tasks for orphans.
  await state.backend.leases.renew(state.owner, []);
  state.lastRenewedAt = Date.now();
  await reconcileAll(state);
  const stopWatchdog = startWatchdog(state);
  const assertOpen = () => {
    if (state.closed)
      throw new TaskStateError("This task manager is closed; open a new one with createTaskManager().");
  };
  return {
    dir: state.dir,
    async start(spec) {
      assertOpen();
      return startTask(state, spec);
    },
    async write(id, input, writeOptions = {}) {
      assertOpen();
      await writeToTask(state, id, input, writeOptions.end === true);
    },
    async stop(id) {
      const live = state.live.get(id);
      if (live !== undefined) return describeTask(state, await stopLiveTask(state, live));
      const record = await requireRecord(state, id);
      return describeTask(
        state,
        isFinalStatus(record.status) ? record : await stopForeignTask(state, record),
      );
    },
    async get(id) {
      return describeTask(state, await requireRecord(state, id));
    },
    async list() {
      return Promise.all((await state.records.store.list()).map((record) => describeTask(state, record)));
    },
    readOutput: (id, offset = 0, readOptions = {}) =>
      readTaskOutput(state, id, offset, readOptions.maxBytes ?? state.readChunkBytes, readOptions.attempt),
    takeNotifications: () => takeNotifications(state),
    wait: (id, waitOptions = {}) => waitForTask(state, id, waitOptions.timeoutMs),
    async close() {
      if (state.closed) return;
      state.closed = true;
      stopWatchdog();
      await closeManager(state);
    },
  };
}
