import { stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { UnforgetError } from "@unforget/core";
import { type LiveTask, localDirectory, type ManagerState } from "../manager/manager-state.ts";
import { readOutputTail } from "../output/task-output.ts";
import { describeError, LeaseLostError, TaskNotFoundError, TaskStoreError } from "../task/task-errors.ts";
import type { TaskDeadlineNotification, TaskNotification } from "../task/task-notification.ts";
import { outputFile, taskDirectory } from "../task/task-paths.ts";
import { isFinalStatus, type TaskRecord, type TaskRecordInit } from "../task/task-record.ts";
import type { TaskOutcome, TaskRunner } from "../types/task-runner.ts";

/** The longest pause between two tries at recording a task's end while the store is unreachable. */
const FINALIZE_RETRY_MAX_MS = 5_000;

/** setTimeout's longest delay; later moments are reached in several hops. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The output file of a task this manager runs (its own copy, even when readers elsewhere read a store). */
export function localOutputPath(state: ManagerState, id: string): string {
  return outputFile(taskDirectory(localDirectory(state), id));
}

/** `{ outputPath }` when readers on this machine can open the output file, else nothing. */
export function outputPathField(state: ManagerState, id: string): { outputPath?: string } {
  const path = state.backend.output.localPath(id);
  return path === undefined ? {} : { outputPath: path };
}

/**
 * `records.mutate` for the task's owner: the change applies only while this manager still owns the task,
 * else `LeaseLostError` (another manager adopted it after this one's lease lapsed), and nothing is written.
 */
export async function mutateOwned(
  state: ManagerState,
  id: string,
  change: (record: TaskRecord) => TaskRecordInit | undefined,
  attempt?: number,
): Promise<TaskRecord> {
  // The ownership check must see the stored record, not a cached copy: a queue may have claimed the task
  // for this same manager again (a new attempt) since the cache was filled.
  await state.records.get(id, true);
  return state.records.mutate(id, (record) => {
    if (attempt !== undefined && record.attempt !== attempt) {
      throw new LeaseLostError(
        `Task ${id} has moved on to attempt ${record.attempt ?? 1}; attempt ${attempt} records nothing more.`,
        { taskId: id },
      );
    }
    if (record.owner?.managerId !== state.owner.managerId) {
      throw new LeaseLostError(
        `Task ${id} is no longer this manager's: ${record.owner === undefined ? "it was released" : `manager ${record.owner.managerId} (pid ${record.owner.pid} on ${record.owner.hostname}) took it over`} after this manager's lease lapsed.`,
        { taskId: id },
      );
    }
    return change(record);
  });
}

/** Reports a failure that happened in the background (a timer, an exit handler), where no caller can catch it. */
export function reportBackground(state: ManagerState, error: unknown): void {
  const typed =
    error instanceof UnforgetError
      ? error
      : new TaskStoreError(`A background task update failed (${describeError(error)}).`, { cause: error });
  try {
    state.reportError(typed);
  } catch {
    // A broken sink must not take the manager down.
  }
}

function scheduleAt(live: LiveTask, at: number, run: () => void): void {
  const delay = Math.max(0, at - Date.now());
  const timer = setTimeout(
    () => (Date.now() >= at ? run() : scheduleAt(live, at, run)),
    Math.min(delay, MAX_DELAY_MS),
  );
  timer.unref();
  live.timers.push(timer);
}

/** Adds a notification to the task's record (so it survives a crash) and makes this manager deliver it. */
export async function raiseNotification(
  state: ManagerState,
  id: string,
  build: (record: TaskRecord) => TaskNotification | undefined,
): Promise<TaskNotification | undefined> {
  let raised: TaskNotification | undefined;
  await mutateOwned(state, id, (record) => {
    raised = build(record);
    return raised === undefined ? undefined : { ...record, pending: [...record.pending, raised] };
  });
  if (raised !== undefined) state.responsible.add(id);
  return raised;
}

/** Stops a live task because a limit was reached; it then fails with that limit as its reason. */
export async function stopForLimit(
  state: ManagerState,
  live: LiveTask,
  limit: "timeout" | "output_limit",
  error: string,
): Promise<void> {
  const now = Date.now();
  const record = await mutateOwned(state, live.id, (current) =>
    isFinalStatus(current.status) || current.stopRequestedAt !== undefined
      ? undefined
      : { ...current, limit, stopRequestedAt: now, error },
  );
  if (record.limit === limit) await live.runner.stop();
}

async function onDeadline(state: ManagerState, live: LiveTask): Promise<void> {
  const tail = await readOutputTail(localOutputPath(state, live.id), state.stall.tailBytes);
  const now = Date.now();
  let raised: TaskDeadlineNotification | undefined;
  // The notification and the flag that prevents a second one are one write.
  await mutateOwned(state, live.id, (record) => {
    if (isFinalStatus(record.status) || record.deadlineNotified) return undefined;
    raised = {
      kind: "deadline",
      taskId: record.id,
      type: record.type,
      description: record.description,
      at: now,
      ...outputPathField(state, live.id),
      runningMs: now - record.createdAt,
      tail,
    };
    return { ...record, deadlineNotified: true, pending: [...record.pending, raised] };
  });
  if (raised === undefined) return;
  state.responsible.add(live.id);
  await state.events.deadline({ taskId: live.id, runningMs: raised.runningMs, tail });
}

function scheduleTimers(state: ManagerState, live: LiveTask, record: TaskRecord): void {
  const { timeoutMs, deadlineAt } = record;
  if (timeoutMs !== undefined) {
    scheduleAt(live, record.createdAt + timeoutMs, () => {
      stopForLimit(state, live, "timeout", `timed out after ${timeoutMs} ms and was stopped`).catch(
        (error: unknown) => reportBackground(state, error),
      );
    });
  }
  if (deadlineAt !== undefined && Number.isFinite(deadlineAt) && !record.deadlineNotified) {
    scheduleAt(live, deadlineAt, () => {
      onDeadline(state, live).catch((error: unknown) => reportBackground(state, error));
    });
  }
}

/** The final record for an outcome: a stop or a timeout outranks what the process said about itself. */
function settle(
  current: TaskRecord,
  outcome: TaskOutcome,
  notification: (status: TaskRecord["status"]) => TaskNotification | undefined,
): TaskRecordInit {
  const status = current.limit ? "failed" : current.stopRequestedAt !== undefined ? "killed" : outcome.status;
  const endReason = current.limit ?? (current.stopRequestedAt !== undefined ? "stopped" : outcome.endReason);
  const raised = notification(status);
  return {
    ...current,
    status,
    endReason,
    endedAt: Date.now(),
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    error: current.limit ? current.error : status === "killed" ? undefined : outcome.error,
    result: outcome.result,
    process: undefined,
    pending: raised === undefined ? current.pending : [...current.pending, raised],
  };
}

/**
 * Records how a task ended, queues its notification ("finished" or "failed"; a task ended by `stop()` does
 * not notify: whoever stopped it knows) and fires `taskSettled`. Only the first call for a task does this.
 */
export async function finalizeTask(
  state: ManagerState,
  id: string,
  outcome: TaskOutcome,
  running: LiveTask | undefined = state.live.get(id),
): Promise<TaskRecord> {
  const live = running;
  for (const timer of live?.timers ?? []) clearTimeout(timer);
  // Readers elsewhere must find all the output committed once the record says the task has ended.
  if (live?.shipper !== undefined) {
    await live.shipper.flush();
    live.shipper.stop();
  }
  state.processes.delete(id);
  const path = localOutputPath(state, id);
  const tail = outcome.status === "failed" ? await readOutputTail(path, state.stall.tailBytes) : "";
  const outputBytes = (await stat(path).catch(() => undefined))?.size ?? 0;
  let settledNow = false;
  const record = await mutateOwned(
    state,
    id,
    (current) => {
      settledNow = !isFinalStatus(current.status);
      if (!settledNow) return undefined;
      const base = {
        taskId: id,
        type: current.type,
        description: current.description,
        at: Date.now(),
        ...outputPathField(state, id),
      };
      return settle(current, outcome, (status): TaskNotification | undefined => {
        if (status === "completed")
          return {
            ...base,
            kind: "finished",
            exitCode: outcome.exitCode,
            result: outcome.result,
            outputBytes,
          };
        if (status === "killed") return undefined;
        return {
          ...base,
          kind: "failed",
          reason: current.limit ?? outcome.endReason,
          exitCode: outcome.exitCode,
          signal: outcome.signal,
          error: current.limit ? current.error : outcome.error,
          tail,
        };
      });
    },
    live?.attempt,
  );
  if (state.live.get(id) === live) state.live.delete(id);
  if (!settledNow) return record;
  if (record.pending.length > 0) state.responsible.add(id);
  await state.events.settled({
    taskId: id,
    status: record.status as "completed" | "failed" | "killed",
    ...outputPathField(state, id),
    type: record.type,
    description: record.description,
    endReason: record.endReason,
    exitCode: record.exitCode,
  });
  return record;
}

/** Watches a runner until its task ends: timers for timeout and deadline, the final record when it is done. */
export function superviseTask(state: ManagerState, record: TaskRecord, runner: TaskRunner): LiveTask {
  const live: LiveTask = {
    id: record.id,
    attempt: record.attempt,
    startedAt: Date.now(),
    runner,
    settled: Promise.resolve(record),
    timers: [],
    stall: { size: -1, changedAt: Date.now() },
  };
  state.live.set(record.id, live);
  scheduleTimers(state, live, record);
  const follow = state.backend.output.follow;
  if (follow !== undefined && record.attempt !== undefined) {
    live.shipper = follow({
      id: record.id,
      attempt: record.attempt,
      localPath: localOutputPath(state, record.id),
      onOverflow(limitBytes) {
        stopForLimit(
          state,
          live,
          "output_limit",
          `its output passed the limit of ${limitBytes} bytes and it was stopped; everything up to the limit was kept`,
        ).catch((error: unknown) => reportBackground(state, error));
      },
    });
  }
  live.settled = runner.done.then(async (outcome) => {
    for (let tries = 1; ; tries++) {
      // Given up (another owner has it, or this one closed without a lease): nothing more is recorded here.
      if (live.relinquished || state.closed) return (await state.records.get(record.id, true)) ?? record;
      try {
        return await finalizeTask(state, record.id, outcome, live);
      } catch (error) {
        if (error instanceof LeaseLostError || error instanceof TaskNotFoundError) {
          // Another manager owns the task now and records its end; this one only stops watching.
          if (state.live.get(record.id) === live) state.live.delete(record.id);
          return (await state.records.get(record.id, true)) ?? record;
        }
        // The store is unreachable for now (a restart, a lost connection): the end is recorded once it is
        // back, for as long as this manager holds the task. Recording is idempotent.
        reportBackground(state, error);
        await sleep(Math.min(FINALIZE_RETRY_MAX_MS, state.pollMs * 2 ** Math.min(tries, 6)));
      }
    }
  });
  live.settled.catch((error: unknown) => reportBackground(state, error));
  return live;
}

/** Asks a live task to stop; one stop at a time, later calls share it. */
export function stopLiveTask(state: ManagerState, live: LiveTask): Promise<TaskRecord> {
  live.stopping ??= (async () => {
    const now = Date.now();
    await state.records.mutate(live.id, (current) =>
      isFinalStatus(current.status) || current.stopRequestedAt !== undefined
        ? undefined
        : { ...current, stopRequestedAt: now },
    );
    await live.runner.stop();
    return live.settled;
  })();
  return live.stopping;
}
