import { mkdir, rm } from "node:fs/promises";
import type { UnforgetError } from "@unforget/core";
import type { TaskBackend } from "../backend/task-backend.ts";
import { createRunnerContext } from "../lifecycle/runner-context.ts";
import { relinquishTask } from "../lifecycle/task-heartbeat.ts";
import { finalizeTask, superviseTask } from "../lifecycle/task-lifecycle.ts";
import { startWatchdog } from "../lifecycle/task-watchdog.ts";
import { describeError, TaskInputError, TaskStateError } from "../task/task-errors.ts";
import { taskDirectory } from "../task/task-paths.ts";
import type { TaskOwner, TaskRecord } from "../task/task-record.ts";
import type { TaskRunner } from "../types/task-runner.ts";
import type { PortableTaskSpec, TaskTypeDefinition } from "../types/task-type.ts";
import { validateTaskSpec } from "../types/validate-task-spec.ts";
import type { ManagerState } from "./manager-state.ts";
import { createState, type StallOptions } from "./task-manager.ts";

export interface TaskExecutorOptions {
  /** Where the tasks it runs keep their local folders (output file, pid and exit status). */
  dir: string;
  /** The shared backend: records, output (shipped), leases, commands, mailbox. */
  backend: TaskBackend;
  /** The only types it runs; a claimed task of another type fails at once. */
  types: readonly TaskTypeDefinition[];
  /**
   * What a task's commands inherit from this process's environment: only `base` (default PATH, HOME,
   * LANG, LC_ALL, TERM, TZ, USER, LOGNAME, SHELL, TMPDIR) and the names a spec asks for in `envFrom` that
   * `allow` lists. A spec asking for a name outside `allow` fails to start, saying so.
   */
  environment?: { allow?: readonly string[]; base?: readonly string[] };
  stall?: StallOptions;
  graceMs?: number;
  pollMs?: number;
  onError?: (error: UnforgetError) => void;
}

/**
 * Runs tasks that a queue handed to this machine, with the lifecycle a manager gives its own: timeout and
 * deadline timers, stall detection, stop and stdin commands, a lease renewed by heartbeat, and fenced
 * writes. A queue worker (`@unforget/tasks-postgres`) claims a task for `owner`, then calls `run`.
 */
export interface TaskExecutor {
  /** The owner a claimed record must name; its lease is this executor's heartbeat. */
  readonly owner: TaskOwner;
  /** The types it runs. */
  readonly types: readonly string[];
  /**
   * Runs a task claimed for `owner` (its record names it, with the attempt that runs here). Resolves with
   * the final record once the task has ended and been recorded, or with the latest record when the task was
   * given to another owner meanwhile (this machine's work is then ended). Never rejects for the task's own
   * failure: that is recorded.
   */
  run(record: TaskRecord, spec: PortableTaskSpec): Promise<TaskRecord>;
  /** Stops the timers and gives up the running tasks (ended here, left to the queue to retry); releases the lease. */
  close(): Promise<void>;
}

const BASE_ENVIRONMENT = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "TERM",
  "TZ",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
];

/** The environment a queued task starts from on this machine: the base, and the allowed names it asked for. */
function environmentFor(
  spec: PortableTaskSpec,
  options: TaskExecutorOptions["environment"] = {},
): Record<string, string | undefined> {
  const allow = new Set(options.allow ?? []);
  const wanted = Array.isArray(spec.envFrom) ? (spec.envFrom as string[]) : [];
  const refused = wanted.filter((name) => !allow.has(name));
  if (refused.length > 0) {
    throw new TaskInputError(
      `envFrom: ${refused.join(", ")} ${refused.length === 1 ? "is" : "are"} not in this worker's allow-list (${[...allow].join(", ") || "empty"}); add ${refused.length === 1 ? "it" : "them"} to createTaskWorker's environment.allow on the machines that should pass ${refused.length === 1 ? "it" : "them"}.`,
      { field: "envFrom" },
    );
  }
  const env: Record<string, string | undefined> = {};
  for (const name of [...(options.base ?? BASE_ENVIRONMENT), ...wanted]) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return env;
}

export async function createTaskExecutor(options: TaskExecutorOptions): Promise<TaskExecutor> {
  const state: ManagerState = createState({
    dir: options.dir,
    backend: { ...options.backend, queue: undefined },
    types: options.types,
    stall: options.stall,
    graceMs: options.graceMs,
    pollMs: options.pollMs,
    onError: options.onError,
    // A worker delivers no notifications: the sessions that started the tasks take them from the records.
    deadlineMs: Number.POSITIVE_INFINITY,
  });
  await mkdir(options.dir, { recursive: true });
  await state.backend.leases.renew(state.owner, []);
  state.lastRenewedAt = Date.now();
  const stopWatchdog = startWatchdog(state, { adopt: false });

  const run = async (record: TaskRecord, spec: PortableTaskSpec): Promise<TaskRecord> => {
    if (state.closed) throw new TaskStateError("This executor is closed.");
    if (record.owner?.managerId !== state.owner.managerId) {
      throw new TaskStateError(`Task ${record.id} was not claimed for this executor; claim it first.`, {
        taskId: record.id,
      });
    }
    // An earlier attempt still running here (this worker's lease lapsed and the queue gave it back to it):
    // it is ended first, and records nothing more.
    const earlier = state.live.get(record.id);
    if (earlier !== undefined) {
      relinquishTask(state, earlier, undefined);
      await earlier.settled.catch(() => undefined);
    }
    // A folder left by an earlier attempt on this machine (its pid and exit files) must not be mistaken for this one's.
    const folder = taskDirectory(options.dir, record.id);
    await rm(folder, { recursive: true, force: true });
    await mkdir(folder, { recursive: true });
    let runner: TaskRunner;
    try {
      validateTaskSpec(spec, state.types, true, state.capabilities);
      const env = environmentFor(spec, options.environment);
      runner = state.types.require(spec.type).start(spec, createRunnerContext(state, record.id, env));
    } catch (error) {
      return finalizeTask(state, record.id, {
        status: "failed",
        endReason: "error",
        error: `could not start on ${state.owner.hostname}: ${describeError(error)}`,
      });
    }
    const live = superviseTask(state, record, runner);
    // A stop asked for while the task waited in the queue, or before this claim, is carried out now.
    if (record.stopRequestedAt !== undefined) void runner.stop();
    return live.settled;
  };

  return {
    owner: state.owner,
    types: state.types.names,
    run,
    async close() {
      if (state.closed) return;
      state.closed = true;
      stopWatchdog();
      for (const live of [...state.live.values()]) relinquishTask(state, live, undefined);
      await state.backend.leases.release(state.owner).catch(() => undefined);
    },
  };
}
