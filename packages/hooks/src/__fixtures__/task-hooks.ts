import { defineHookGroup } from "../bus/hook-group.ts";
import type { SessionEventBase } from "../hook-events.ts";
import { createObserverHook } from "../kinds/observer-hook.ts";

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
