import type { TaskNotification } from "../task/task-notification.ts";
import { isFinalStatus } from "../task/task-record.ts";
import type { ManagerState } from "./manager-state.ts";

/**
 * Empties the pending notifications of the tasks this manager answers for, each with a compare-and-swap, so
 * that a notification is returned by exactly one call of one manager; oldest first.
 */
export async function takeNotifications(state: ManagerState): Promise<TaskNotification[]> {
  const taken: TaskNotification[] = [];
  for (const id of [...state.responsible]) {
    let pending: readonly TaskNotification[] = [];
    // Another manager or a worker may have added some since this one cached the record.
    if (!state.live.has(id)) await state.records.get(id, true);
    const record = await state.records.mutate(id, (current) => {
      pending = current.pending;
      return pending.length === 0 ? undefined : { ...current, pending: [] };
    });
    taken.push(...pending);
    const queued = state.backend.queue !== undefined && record.sessionId === state.sessionId;
    if (isFinalStatus(record.status) || (!state.live.has(id) && !queued)) state.responsible.delete(id);
  }
  return taken.sort((a, b) => a.at - b.at);
}
