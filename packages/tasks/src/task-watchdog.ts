import { stat } from "node:fs/promises";
import type { LiveTask, ManagerState } from "./manager-state.ts";
import { matchInteractivePrompt } from "./prompt-patterns.ts";
import { checkForeignTasks, reconcileAll } from "./reconcile-tasks.ts";
import { outputPathOf, raiseNotification, reportBackground } from "./task-lifecycle.ts";
import { readOutputTail } from "./task-output.ts";
import { isFinalStatus } from "./task-record.ts";

/** Ticks between full scans of the directory for tasks that were released or lost their manager. */
const RESCAN_EVERY_TICKS = 12;

/**
 * Once the output has been quiet for `quietMs`, reads its tail and looks for a prompt; checks once per quiet
 * spell (new output starts a new one), so a long silent compile is read once, not every tick.
 */
export async function checkStall(state: ManagerState, live: LiveTask, now = Date.now()): Promise<void> {
  const path = outputPathOf(state, live.id);
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
          outputPath: path,
          prompt,
          tail,
          quietMs,
        },
  );
  if (raised !== undefined) await state.events.stalled({ taskId: live.id, prompt, tail, quietMs });
}

/** Starts the manager's periodic work: stall checks, and watching the tasks of other managers. */
export function startWatchdog(state: ManagerState): () => void {
  let ticks = 0;
  let running = false;
  const tick = async () => {
    ticks += 1;
    const checks = [...state.live.values()]
      .filter((live) => live.runner.watchForPrompts)
      .map((live) => checkStall(state, live));
    await Promise.all(checks);
    await checkForeignTasks(state);
    if (ticks % RESCAN_EVERY_TICKS === 0) await reconcileAll(state);
  };
  const timer = setInterval(() => {
    // A slow tick (a huge directory, a slow disk) is never overlapped by the next one.
    if (running || state.closed) return;
    running = true;
    tick()
      .catch((error: unknown) => reportBackground(state, error))
      .finally(() => {
        running = false;
      });
  }, state.stall.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
