import type { SessionEventBase } from "../hook-events.ts";
import { defineHookGroup } from "../hook-group.ts";
import { createObserverHook } from "../observer-hook.ts";

/** A group declared the way the tasks package declares its own (tests only). */
export interface TaskSettledEvent extends SessionEventBase {
  taskId: string;
  status: "completed" | "failed" | "killed";
  outputPath?: string;
}

export const getTaskHooks = defineHookGroup("tasks", () => ({
  /** When a background task reaches a final state; observers. */
  taskSettled: createObserverHook<[TaskSettledEvent]>(["event"], "taskSettled", {
    eventName: "TaskSettled",
    matcherValue: (event) => event.status,
  }),
}));
