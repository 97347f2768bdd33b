import { hostname } from "node:os";
import { isProcessAlive } from "@unforget/process";
import type { LiveTask, ManagerState } from "../manager/manager-state.ts";
import { describeError } from "../task/task-errors.ts";
import type { TaskRecord } from "../task/task-record.ts";
import { reportBackground, stopLiveTask } from "./task-lifecycle.ts";

/**
 * Gives up a task whose lease this manager lost. When the new owner watches the very process this manager
 * started (on this host), the process is left to it; anything else is ended, so that a paused manager that
 * wakes up never works on, or records, a task that has moved on.
 */
export function relinquishTask(state: ManagerState, live: LiveTask, record: TaskRecord | undefined): void {
  if (live.relinquished) return;
  live.relinquished = true;
  for (const timer of live.timers) clearTimeout(timer);
  if (state.live.get(live.id) === live) state.live.delete(live.id);
  live.shipper?.stop();
  const mine = state.processes.get(live.id);
  state.processes.delete(live.id);
  const adoptedHere =
    record?.owner !== undefined &&
    record.owner.hostname === hostname() &&
    mine !== undefined &&
    record.process?.pid === mine.pid &&
    record.process.startTime === mine.startTime &&
    isProcessAlive(mine);
  if (adoptedHere && live.runner.release !== undefined) live.runner.release();
  else void live.runner.stop().catch((error: unknown) => reportBackground(state, error));
}

/** Renews this manager's lease, and gives up the tasks it no longer holds. */
export async function heartbeat(state: ManagerState): Promise<void> {
  const leases = state.backend.leases;
  try {
    const renewedAt = Date.now();
    await leases.renew(state.owner, [...state.live.keys()]);
    // After a gap past the lease (the process was paused) others may have taken its tasks: the writers stay
    // fenced until every task has been checked. Checked on every beat too, for a task given to another owner
    // while this one kept renewing (a queue's own expiry).
    await checkOwnership(state);
    state.lastRenewedAt = renewedAt;
    return;
  } catch (error) {
    reportBackground(state, error);
  }
}

/**
 * For a worker whose tasks a queue runs again elsewhere: once its lease has gone unrenewed for longer than the
 * lease (the database is unreachable, a renewal hangs), it cannot know whether another worker took its tasks,
 * so it ends their work and records nothing. A manager's own tasks are adopted, not retried: it waits instead.
 */
export function checkLeaseExpiry(state: ManagerState, now = Date.now()): void {
  const { leaseMs } = state.backend.leases;
  if (now - state.lastRenewedAt <= leaseMs) return;
  // A task claimed since the last renewal got its own fresh lease with the claim.
  for (const live of [...state.live.values()]) {
    if (now - Math.max(state.lastRenewedAt, live.startedAt) > leaseMs) relinquishTask(state, live, undefined);
  }
}

/** Gives up every live task whose record names another owner. */
export async function checkOwnership(state: ManagerState): Promise<void> {
  for (const live of [...state.live.values()]) {
    const record = await state.records.get(live.id, true);
    if (record !== undefined && record.owner?.managerId !== state.owner.managerId)
      relinquishTask(state, live, record);
  }
}

/** Carries out the stop and stdin commands sent to this manager's tasks, and answers each. */
export async function runCommands(state: ManagerState): Promise<void> {
  const commands = state.backend.commands;
  for (const live of [...state.live.values()]) {
    for (const command of await commands.pending(live.id)) {
      let error: string | undefined;
      try {
        if (command.kind === "stop") await stopLiveTask(state, live);
        else if (live.runner.write === undefined) error = `Task ${live.id} takes no input.`;
        else await live.runner.write(command.input ?? "", command.end === true);
      } catch (failure) {
        error = describeError(failure);
      }
      await commands.acknowledge(command, { ok: error === undefined, error, at: Date.now() });
    }
  }
}
