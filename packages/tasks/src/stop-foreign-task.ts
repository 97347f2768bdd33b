import { setTimeout as sleep } from "node:timers/promises";
import { type ManagerState, ownerIsAlive } from "./manager-state.ts";
import { terminateGroup } from "./process-group.ts";
import { isProcessAlive } from "./process-identity.ts";
import { adoptTask } from "./reconcile-tasks.ts";
import { TaskStateError } from "./task-errors.ts";
import { stopLiveTask } from "./task-lifecycle.ts";
import { isFinalStatus, type TaskRecord } from "./task-record.ts";

/** How long a stopped task's own manager gets to record its end, beyond the grace period. */
const RECORD_WAIT_MS = 10_000;

/**
 * Stops a task this manager does not run. An unwatched one is adopted first. A process task of another live
 * manager is marked as stopped and its group signalled; that manager sees the exit and records it (this one
 * takes over if it dies meanwhile). An in-process job of another manager can only be stopped there.
 */
export async function stopForeignTask(state: ManagerState, record: TaskRecord): Promise<TaskRecord> {
  const id = record.id;
  if (!ownerIsAlive(record.owner)) await adoptTask(state, record);
  const adopted = state.live.get(id);
  if (adopted !== undefined) return stopLiveTask(state, adopted);
  const leader = record.process;
  if (leader === undefined) {
    const latest = await state.records.get(id, true);
    if (latest !== undefined && isFinalStatus(latest.status)) return latest;
    throw new TaskStateError(
      `Task ${id} runs inside another manager (pid ${record.owner?.pid ?? "unknown"}); stop it from that manager.`,
      { taskId: id },
    );
  }
  const now = Date.now();
  await state.records.mutate(id, (current) =>
    isFinalStatus(current.status) || current.stopRequestedAt !== undefined
      ? undefined
      : { ...current, stopRequestedAt: now },
  );
  if (isProcessAlive(leader)) await terminateGroup(leader.pid, state.graceMs);
  const until = Date.now() + state.graceMs + RECORD_WAIT_MS;
  for (;;) {
    const latest = await state.records.get(id, true);
    if (latest === undefined || isFinalStatus(latest.status) || Date.now() >= until) return latest ?? record;
    if (!ownerIsAlive(latest.owner)) {
      await adoptTask(state, latest);
      const live = state.live.get(id);
      if (live !== undefined) return live.settled;
    }
    await sleep(state.pollMs);
  }
}
