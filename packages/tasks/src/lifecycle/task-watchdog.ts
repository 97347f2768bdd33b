import { stat } from "node:fs/promises";
import type { LiveTask, ManagerState } from "../manager/manager-state.ts";
import { readOutputTail } from "../output/task-output.ts";
import { isFinalStatus } from "../task/task-record.ts";
import { matchInteractivePrompt } from "./prompt-patterns.ts";
import { checkForeignTasks, reconcileAll } from "./reconcile-tasks.ts";
import { checkLeaseExpiry, heartbeat, runCommands } from "./task-heartbeat.ts";
import { localOutputPath, outputPathField, raiseNotification, reportBackground } from "./task-lifecycle.ts";

/** Ticks between full scans of the directory for tasks that were released or lost their manager. */
const RESCAN_EVERY_TICKS = 12;

/**
 * Once the output has been quiet for `quietMs`, reads its tail and looks for a prompt; checks once per quiet
 * spell (new output starts a new one), so a long silent compile is read once, not every tick.
 */
export async function checkStall(state: ManagerState, live: LiveTask, now = Date.now()): Promise<void> {
  const path = localOutputPath(state, live.id);
  const stats = await stat(path).catch(() => undefined);
  const size = stats?.size ?? 0;
  if (size !== live.stall.size) {
    // A task re-attached after a restart has been quiet since its file was last written, not since now.
    const changedAt = live.stall.size === -1 && stats !== undefined ? Math.min(now, stats.mtimeMs) : now;
    live.stall = { size, changedAt };
  }
  const quietMs = now - live.stall.changedAt;
  if (quietMs < state.stall.quietMs || live.stall.checkedSize === size) return;
  live.stall.checkedSize = size;
  const tail = await readOutputTail(path, state.stall.tailBytes);
  const prompt = matchInteractivePrompt(tail, state.stall.patterns);
  if (prompt === undefined) return;
  const raised = await raiseNotification(state, live.id, (record) =>
    isFinalStatus(record.status)
      ? undefined
      : {
          kind: "stalled",
          taskId: record.id,
          type: record.type,
          description: record.description,
          at: now,
          ...outputPathField(state, live.id),
          prompt,
          tail,
          quietMs,
        },
  );
  if (raised !== undefined) await state.events.stalled({ taskId: live.id, prompt, tail, quietMs });
}

/** How long a queued task may wait with no live worker for its type before it notifies. */
export const NO_WORKER_MS = 60_000;

/**
 * Queued tasks of this manager that no worker has claimed: once one has waited `noWorkerMs` and no live
 * worker runs its type, it notifies `no_worker` (once), so that the agent hears of it rather than waiting.
 */
export async function checkWaitingTasks(state: ManagerState, now = Date.now()): Promise<void> {
  const queue = state.backend.queue;
  if (queue === undefined) return;
  for (const id of [...state.responsible]) {
    const record = await state.records.get(id);
    if (
      record === undefined ||
      isFinalStatus(record.status) ||
      record.owner !== undefined ||
      record.noWorkerNotified ||
      now - record.createdAt < state.noWorkerMs
    )
      continue;
    if ((await queue.liveWorkers(record.type)) > 0) continue;
    const fresh = await state.records.mutate(id, (current) =>
      isFinalStatus(current.status) || current.owner !== undefined || current.noWorkerNotified
        ? undefined
        : {
            ...current,
            noWorkerNotified: true,
            pending: [
              ...current.pending,
              {
                kind: "no_worker",
                taskId: id,
                type: current.type,
                description: current.description,
                at: now,
                waitingMs: now - current.createdAt,
              },
            ],
          },
    );
    if (fresh.noWorkerNotified) state.responsible.add(id);
  }
}

/** Runs `work` every `intervalMs`, never two at once (a slow tick is skipped, not stacked); returns the stop. */
function every(state: ManagerState, intervalMs: number, work: () => Promise<void>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running || state.closed) return;
    running = true;
    work()
      .catch((error: unknown) => reportBackground(state, error))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Starts the manager's periodic work: stall checks and (`adopt`) watching other managers' tasks (every
 * `stall.intervalMs`), the lease's heartbeat (every third of the lease), and the commands other managers
 * send to this one's tasks (every `pollMs`).
 */
export function startWatchdog(
  state: ManagerState,
  options: { adopt: boolean } = { adopt: true },
): () => void {
  let ticks = 0;
  const stops = [
    every(state, state.stall.intervalMs, async () => {
      ticks += 1;
      const checks = [...state.live.values()]
        .filter((live) => live.runner.watchForPrompts)
        .map((live) => checkStall(state, live));
      await Promise.all(checks);
      if (!options.adopt) return;
      await checkWaitingTasks(state);
      await checkForeignTasks(state);
      if (ticks % RESCAN_EVERY_TICKS === 0) await reconcileAll(state);
    }),
    every(state, Math.max(1, Math.floor(state.backend.leases.leaseMs / 3)), () => heartbeat(state)),
    // A worker checks on its own clock too, for a renewal that hangs rather than fails.
    ...(options.adopt
      ? []
      : [
          every(state, Math.max(20, Math.floor(state.backend.leases.leaseMs / 10)), async () =>
            checkLeaseExpiry(state),
          ),
        ]),
    every(state, state.pollMs, () => runCommands(state)),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
