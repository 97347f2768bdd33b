import { hostname } from "node:os";
import { isProcessAlive, terminateGroup } from "@unforget/process";
import { type ManagerState, ownerHolds } from "../manager/manager-state.ts";
import { isFinalStatus, type TaskRecord } from "../task/task-record.ts";
import { createRunnerContext } from "./runner-context.ts";
import { finalizeTask, superviseTask } from "./task-lifecycle.ts";

/**
 * Takes over a running task whose owner's lease has lapsed, unless another manager was quicker (the owner
 * must still be the one whose lease was checked: the compare-and-swap decides between adopters). Work that
 * survived its owner on this machine is watched again; anything else is recorded with how it ended.
 */
export async function adoptTask(state: ManagerState, record: TaskRecord): Promise<void> {
  if (state.dir === undefined || !state.types.has(record.type)) return;
  if (await ownerHolds(state, record.owner)) return;
  const previous = record.owner;
  const adopted = await state.records.mutate(record.id, (current) =>
    isFinalStatus(current.status) || current.owner?.managerId !== previous?.managerId
      ? undefined
      : { ...current, owner: state.owner },
  );
  if (adopted.owner?.managerId !== state.owner.managerId || isFinalStatus(adopted.status)) return;
  state.foreign.delete(record.id);
  const context = createRunnerContext(state, record.id);
  // A process on another machine cannot be watched from here.
  const sameHost = previous === undefined || previous.hostname === hostname();
  const definition = state.types.require(adopted.type);
  const attached = definition.attach?.(sameHost ? adopted : { ...adopted, process: undefined }, context);
  if (attached !== undefined && "done" in attached) {
    superviseTask(state, adopted, attached);
    return;
  }
  if (attached !== undefined) {
    await finalizeTask(state, adopted.id, attached);
    return;
  }
  // In-process work ran inside its owner and ended with it; a process it had started here is ended too.
  if (sameHost && adopted.process !== undefined && isProcessAlive(adopted.process)) {
    await terminateGroup(adopted.process.pid, state.graceMs);
  }
  const where = previous === undefined ? "" : ` (pid ${previous.pid} on ${previous.hostname})`;
  await finalizeTask(state, adopted.id, {
    status: "failed",
    endReason: "lost",
    error: `its manager${where} stopped renewing its lease while the task ran; ${adopted.type} tasks run inside their manager and end with it`,
  });
}

/** Sorts one record found in the store: adopt it, watch it from afar, or deliver its notifications. */
export async function reconcileRecord(state: ManagerState, record: TaskRecord): Promise<void> {
  if (state.live.has(record.id)) return;
  const mine = record.owner?.managerId === state.owner.managerId;
  const ownSession = state.sessionId !== "" && record.sessionId === state.sessionId;
  if (isFinalStatus(record.status)) {
    state.foreign.delete(record.id);
    if (record.pending.length > 0 && (mine || ownSession || !(await ownerHolds(state, record.owner))))
      state.responsible.add(record.id);
    return;
  }
  // A task of this session that runs elsewhere: its notifications (stalled, deadline) are this manager's.
  if (ownSession && record.pending.length > 0) state.responsible.add(record.id);
  if (record.owner === undefined && state.backend.queue !== undefined) return; // queued, not yet claimed
  if (await ownerHolds(state, record.owner)) {
    state.foreign.add(record.id);
    return;
  }
  await adoptTask(state, record);
}

/** Goes through every task in the store (on start, and now and then to find released tasks). */
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
