import type { SessionHooks } from "@unforget/hooks";
import {
  getTaskHooks,
  type TaskDeadlineEvent,
  type TaskSettledEvent,
  type TaskStalledEvent,
  type TaskStartedEvent,
} from "./task-hooks.ts";

type Payload<E> = Omit<E, "sessionId" | "transcriptId">;

/** Fires the task hooks of a session bus, when the manager was given one. Never throws. */
export interface TaskEvents {
  started(event: Payload<TaskStartedEvent>): Promise<void>;
  settled(event: Payload<TaskSettledEvent>): Promise<void>;
  stalled(event: Payload<TaskStalledEvent>): Promise<void>;
  deadline(event: Payload<TaskDeadlineEvent>): Promise<void>;
}

export function createTaskEvents(hooks: SessionHooks | undefined, sessionId: string): TaskEvents {
  const fire = async (run: (bus: SessionHooks) => Promise<void>) => {
    if (hooks === undefined) return;
    try {
      await run(hooks);
    } catch {
      // Observers are isolated and reported by the bus itself; nothing a tap does may stop a task.
    }
  };
  return {
    started: (event) => fire((bus) => getTaskHooks(bus).taskStarted.promise({ sessionId, ...event })),
    settled: (event) => fire((bus) => getTaskHooks(bus).taskSettled.promise({ sessionId, ...event })),
    stalled: (event) => fire((bus) => getTaskHooks(bus).taskStalled.promise({ sessionId, ...event })),
    deadline: (event) => fire((bus) => getTaskHooks(bus).taskDeadline.promise({ sessionId, ...event })),
  };
}
