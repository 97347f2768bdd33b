import { setTimeout as sleep } from "node:timers/promises";
import { TaskStateError } from "../task/task-errors.ts";
import type { TaskInfo } from "../task/task-info.ts";
import { isFinalStatus } from "../task/task-record.ts";
import type { ManagerState } from "./manager-state.ts";
import { describeTask, requireRecord } from "./task-lookup.ts";

const MAX_DELAY_MS = 2 ** 31 - 1;

/** Resolves once the task has ended: at once for one this manager runs, by polling the store for others. */
export async function waitForTask(
  state: ManagerState,
  id: string,
  timeoutMs = Number.POSITIVE_INFINITY,
): Promise<TaskInfo> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const live = state.live.get(id);
    const record = live !== undefined ? undefined : await requireRecord(state, id);
    if (record !== undefined && isFinalStatus(record.status)) return describeTask(state, record);
    const remaining = until - Date.now();
    if (remaining <= 0) {
      throw new TaskStateError(`Task ${id} was still running after ${timeoutMs} ms of waiting.`, {
        taskId: id,
      });
    }
    if (live !== undefined) {
      // Unreferenced: the task's own child process keeps the event loop alive while it runs.
      const timeout = sleep(Math.min(remaining, MAX_DELAY_MS), undefined, { ref: false });
      const settled = await Promise.race([live.settled, timeout]);
      if (settled !== undefined) return describeTask(state, settled);
    } else await sleep(Math.min(state.pollMs, remaining));
  }
}
