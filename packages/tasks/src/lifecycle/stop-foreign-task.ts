import { setTimeout as sleep } from "node:timers/promises";
import type { TaskCommand } from "../backend/task-backend.ts";
import { type ManagerState, ownerHolds } from "../manager/manager-state.ts";
import { requireRecord } from "../manager/task-lookup.ts";
import { TaskStateError } from "../task/task-errors.ts";
import { isFinalStatus, type TaskRecord } from "../task/task-record.ts";
import { adoptTask } from "./reconcile-tasks.ts";
import { stopLiveTask } from "./task-lifecycle.ts";

/** How long a stopped task's owner gets to record its end, beyond the grace period. */
const RECORD_WAIT_MS = 10_000;

/** Stops a queued task no worker has claimed yet: it ends here, and a worker that claims it later skips it. */
async function stopUnclaimed(state: ManagerState, id: string): Promise<TaskRecord> {
  const now = Date.now();
  return state.records.mutate(id, (current) =>
    isFinalStatus(current.status) || current.owner !== undefined
      ? undefined
      : { ...current, status: "killed", endReason: "stopped", endedAt: now, stopRequestedAt: now },
  );
}

/**
 * Stops a task this manager does not run. An unwatched one is adopted (or, still queued, ended at once);
 * the owner of a watched one is sent a stop command, which it carries out wherever it runs and records.
 * Resolves with the latest record once the task has ended, or after the owner's grace period and 10 s.
 */
export async function stopForeignTask(state: ManagerState, record: TaskRecord): Promise<TaskRecord> {
  const id = record.id;
  if (record.owner === undefined && state.backend.queue !== undefined) {
    const stopped = await stopUnclaimed(state, id);
    if (isFinalStatus(stopped.status)) return stopped;
  } else if (!(await ownerHolds(state, record.owner))) {
    await adoptTask(state, record);
    const adopted = state.live.get(id);
    if (adopted !== undefined) return stopLiveTask(state, adopted);
  }
  const now = Date.now();
  // Recorded first: an owner that dies before it gets the command still ends as stopped, not failed.
  const marked = await state.records.mutate(id, (current) =>
    isFinalStatus(current.status) || current.stopRequestedAt !== undefined
      ? undefined
      : { ...current, stopRequestedAt: now },
  );
  if (isFinalStatus(marked.status)) return marked;
  await state.backend.commands.send({ taskId: id, kind: "stop" });
  const until = Date.now() + state.graceMs + RECORD_WAIT_MS;
  for (;;) {
    const latest = await state.records.get(id, true);
    if (latest === undefined || isFinalStatus(latest.status) || Date.now() >= until) return latest ?? record;
    if (latest.owner !== undefined && !(await ownerHolds(state, latest.owner))) {
      await adoptTask(state, latest);
      const live = state.live.get(id);
      if (live !== undefined) return stopLiveTask(state, live);
    }
    await sleep(state.pollMs);
  }
}

/** How long an acknowledgement may follow the task's end (the owner stores the two independently). */
const ENDED_ACK_GRACE_MS = 1_000;

/** Waits for the owner's answer to a command; a refusal or no answer within `timeoutMs` is a `TaskStateError`. */
async function awaitAcknowledgement(
  state: ManagerState,
  command: TaskCommand,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  let endedSeenAt: number | undefined;
  for (;;) {
    const result = await state.backend.commands.result(command);
    if (result !== undefined) {
      if (result.ok) return;
      throw new TaskStateError(result.error ?? `Task ${command.taskId} refused the input.`, {
        taskId: command.taskId,
      });
    }
    const record = await requireRecord(state, command.taskId);
    if (isFinalStatus(record.status)) {
      // The owner writes the input, then acknowledges it: a task that read it and ended at once can be recorded
      // as ended before the acknowledgement is. Wait a little for it before saying the input was not taken.
      endedSeenAt ??= Date.now();
      if (Date.now() - endedSeenAt >= Math.max(ENDED_ACK_GRACE_MS, 4 * state.pollMs) || Date.now() >= until) {
        throw new TaskStateError(
          `Task ${command.taskId} ended (${record.status}) before it took the input.`,
          {
            taskId: command.taskId,
          },
        );
      }
      await sleep(Math.min(state.pollMs, 100));
      continue;
    }
    if (Date.now() >= until) {
      throw new TaskStateError(
        `The manager running task ${command.taskId} did not take the input within ${timeoutMs} ms; it may have stopped. Check the task with get(), then send again.`,
        { taskId: command.taskId },
      );
    }
    await sleep(Math.min(state.pollMs, 100));
  }
}

/** Sends input to a task another manager (or a worker) runs, and resolves once its owner has written it. */
export async function writeToForeignTask(
  state: ManagerState,
  record: TaskRecord,
  input: string,
  end: boolean,
): Promise<void> {
  const id = record.id;
  if (isFinalStatus(record.status)) {
    throw new TaskStateError(`Task ${id} has ended (${record.status}); it takes no more input.`, {
      taskId: id,
    });
  }
  if (record.owner === undefined) {
    throw new TaskStateError(
      `Task ${id} is not running yet (it waits for a worker), so nothing reads its input; send it once it has started.`,
      { taskId: id },
    );
  }
  if (!(await ownerHolds(state, record.owner))) {
    throw new TaskStateError(
      `Task ${id} has no live owner to pass the input to (its manager stopped renewing its lease); wait for it to be adopted, then send again.`,
      { taskId: id },
    );
  }
  const command = await state.backend.commands.send({ taskId: id, kind: "stdin", input, end });
  await awaitAcknowledgement(state, command, state.backend.leases.leaseMs + 4 * state.pollMs);
}
