import { readFileSync } from "node:fs";
import { attachLocalBash, readWrapperNumber } from "./local-bash-runner.ts";
import { type ManagerState, ownerIsAlive } from "./manager-state.ts";
import { terminateGroup } from "./process-group.ts";
import { isProcessAlive, type ProcessIdentity, readProcessIdentity } from "./process-identity.ts";
import { createRunnerContext } from "./runner-context.ts";
import { finalizeTask, superviseTask } from "./task-lifecycle.ts";
import { exitStatusFile, pidFile, taskDirectory } from "./task-paths.ts";
import { isFinalStatus, type TaskRecord } from "./task-record.ts";
import { outcomeFromExit } from "./task-runner.ts";

/**
 * The leader of a local_bash task whose manager died before recording it: the pid the wrapper wrote, if that
 * process still runs the wrapper of this very task (its command line names the task's folder).
 */
function leaderFromPidFile(state: ManagerState, record: TaskRecord): ProcessIdentity | undefined {
  const folder = taskDirectory(state.dir, record.id);
  const pid = readWrapperNumber(pidFile(folder));
  if (pid === undefined) return undefined;
  const identity = readProcessIdentity(pid);
  if (identity === undefined) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(pidFile(folder)) ? identity : undefined;
  } catch {
    return undefined;
  }
}

/** Takes over a running task whose manager is gone, unless another manager was quicker. */
export async function adoptTask(state: ManagerState, record: TaskRecord): Promise<void> {
  const adopted = await state.records.mutate(record.id, (current) =>
    isFinalStatus(current.status) || ownerIsAlive(current.owner)
      ? undefined
      : { ...current, owner: state.owner },
  );
  if (adopted.owner?.managerId !== state.owner.managerId || isFinalStatus(adopted.status)) return;
  state.foreign.delete(record.id);
  const context = createRunnerContext(state, record.id);
  if (adopted.type === "local_bash") {
    const leader = adopted.process ?? leaderFromPidFile(state, adopted);
    if (leader !== undefined && isProcessAlive(leader)) {
      superviseTask(state, adopted, attachLocalBash(adopted, leader, context, state.pollMs));
      return;
    }
    await finalizeTask(
      state,
      adopted.id,
      outcomeFromExit(readWrapperNumber(exitStatusFile(context.taskDirectory))),
    );
    return;
  }
  // An in-process job ran inside its manager and ended with it; a process it had started is ended too.
  if (adopted.process !== undefined && isProcessAlive(adopted.process)) {
    await terminateGroup(adopted.process.pid, state.graceMs);
  }
  await finalizeTask(state, adopted.id, {
    status: "failed",
    endReason: "lost",
    error: `its manager (pid ${record.owner?.pid ?? "unknown"}) ended while it ran; ${adopted.type} tasks run inside their manager and end with it`,
  });
}

/** Sorts one record found in the directory: adopt it, watch it from afar, or deliver its notifications. */
export async function reconcileRecord(state: ManagerState, record: TaskRecord): Promise<void> {
  if (state.live.has(record.id)) return;
  if (isFinalStatus(record.status)) {
    state.foreign.delete(record.id);
    const mine = record.owner?.managerId === state.owner.managerId;
    if (record.pending.length > 0 && (mine || !ownerIsAlive(record.owner))) state.responsible.add(record.id);
    return;
  }
  if (ownerIsAlive(record.owner)) {
    state.foreign.add(record.id);
    return;
  }
  await adoptTask(state, record);
}

/** Goes through every task in the directory (on start, and now and then to find released tasks). */
export async function reconcileAll(state: ManagerState): Promise<void> {
  for (const record of await state.records.store.list()) await reconcileRecord(state, record);
}

/** Re-checks the tasks other managers watch: one that lost its manager is adopted. */
export async function checkForeignTasks(state: ManagerState): Promise<void> {
  for (const id of [...state.foreign]) {
    const record = await state.records.get(id, true);
    if (record === undefined) state.foreign.delete(id);
    else await reconcileRecord(state, record);
  }
}
