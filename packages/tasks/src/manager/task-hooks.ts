import { createObserverHook, defineHookGroup, type SessionEventBase } from "@unforget/hooks";
import type { TaskEndReason, TaskType } from "../task/task-record.ts";

/** Fired when a task has been started (its record is stored and its work has begun). */
export interface TaskStartedEvent extends SessionEventBase {
  taskId: string;
  type: TaskType;
  description: string;
  /** Where the task's output lives on this machine (the file backend); absent when it runs elsewhere. */
  outputPath?: string;
}

/** Fired when a task reaches a final state. */
export interface TaskSettledEvent extends SessionEventBase {
  taskId: string;
  status: "completed" | "failed" | "killed";
  /** Where the task's output lives on disk. */
  outputPath?: string;
  type: TaskType;
  description: string;
  endReason?: TaskEndReason;
  exitCode?: number;
}

/** Fired when a task's output has been quiet and ends with what looks like a prompt. */
export interface TaskStalledEvent extends SessionEventBase {
  taskId: string;
  /** The kind of prompt ("yes/no question", "password", …). */
  prompt: string;
  /** The last output, ending with the prompt. */
  tail: string;
  quietMs: number;
}

/** Fired once when a task is still running at its deadline: the liveness signal for long tasks. */
export interface TaskDeadlineEvent extends SessionEventBase {
  taskId: string;
  runningMs: number;
  tail: string;
}

/**
 * The task hooks of one session bus: created on first use, the same frozen object afterwards. All four are
 * observers: a failing tap is reported through the bus and never stops a task or another tap. Command hooks
 * subscribe to them by their event names (TaskStarted, TaskSettled, TaskStalled, TaskDeadline).
 */
export const getTaskHooks = defineHookGroup("tasks", () => ({
  /** When a background task has started; observers. */
  taskStarted: createObserverHook<[TaskStartedEvent]>(["event"], "taskStarted", { eventName: "TaskStarted" }),
  /** When a background task reaches a final state; observers. */
  taskSettled: createObserverHook<[TaskSettledEvent]>(["event"], "taskSettled", {
    eventName: "TaskSettled",
    // A settings file can run a command for failed tasks only: {"matcher": "failed"}.
    matcherValue: (event) => event.status,
  }),
  /** When a background task seems to wait for input; observers. */
  taskStalled: createObserverHook<[TaskStalledEvent]>(["event"], "taskStalled", { eventName: "TaskStalled" }),
  /** When a background task passes its deadline still running; observers. */
  taskDeadline: createObserverHook<[TaskDeadlineEvent]>(["event"], "taskDeadline", {
    eventName: "TaskDeadline",
  }),
}));
