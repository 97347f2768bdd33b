import type { Attachment } from "@unforget/core";
import type { HookPlugin } from "@unforget/hooks";
import type { TaskManager } from "../manager/task-manager.ts";
import type { TaskInfo } from "../task/task-info.ts";
import type { TaskNotification } from "../task/task-notification.ts";
import { formatBytes, formatDuration } from "./format.ts";
import { TASK_TOOL_NAMES } from "./task-tool-names.ts";

export interface TaskStatusOptions {
  /** "Now", in epoch milliseconds (default `Date.now()`). */
  now?: number;
  /** Ended tasks are listed for this long after they ended (default 1 800 000 = 30 min). */
  recentMs?: number;
  /** At most this many tasks, running ones first (default 20). */
  maxTasks?: number;
}

function describeState(task: TaskInfo, now: number): string {
  if (task.status === "running") {
    const quiet =
      task.lastOutputAt === undefined
        ? "no output yet"
        : `last output ${formatDuration(now - task.lastOutputAt)} ago`;
    return `running for ${formatDuration(now - task.createdAt)}, ${formatBytes(task.outputBytes)} of output, ${quiet}`;
  }
  const ago = `${formatDuration(now - (task.endedAt ?? now))} ago`;
  if (task.status === "completed")
    return `completed ${ago}${task.exitCode === undefined ? "" : ` (exit code ${task.exitCode})`}, ${formatBytes(task.outputBytes)} of output`;
  if (task.status === "killed") return `stopped ${ago}`;
  return `failed ${ago}: ${task.error ?? task.endReason ?? "unknown reason"}`;
}

/**
 * Running and recently ended tasks as text for the agent, e.g. after a compaction or a resume, so that it
 * does not start again a task it has forgotten. Empty when there is nothing to report.
 */
export function renderTaskStatus(tasks: readonly TaskInfo[], options: TaskStatusOptions = {}): string {
  const now = options.now ?? Date.now();
  const recentMs = options.recentMs ?? 1_800_000;
  const shown = tasks
    .filter((task) => task.status === "running" || now - (task.endedAt ?? now) <= recentMs)
    .sort(
      (a, b) => Number(b.status === "running") - Number(a.status === "running") || b.createdAt - a.createdAt,
    )
    .slice(0, options.maxTasks ?? 20);
  if (shown.length === 0) return "";
  const lines = shown.map(
    (task) => `- ${task.id} (${task.type}) ${task.description} — ${describeState(task, now)}`,
  );
  return [
    `Background tasks (they keep running on their own; do not start them again — read their output with ${TASK_TOOL_NAMES.output}, stop them with ${TASK_TOOL_NAMES.stop}):`,
    ...lines,
  ].join("\n");
}

/** `renderTaskStatus` as an attachment of kind "task-status", or undefined when there is nothing to report. */
export function createTaskStatusAttachment(
  tasks: readonly TaskInfo[],
  options?: TaskStatusOptions,
): Attachment | undefined {
  const content = renderTaskStatus(tasks, options);
  return content === "" ? undefined : { kind: "task-status", content, source: "@unforget/tasks" };
}

function withTail(text: string, tail: string): string {
  return tail === "" ? text : `${text} Last output:\n${tail.replace(/\n$/, "")}`;
}

/** One notification as a sentence (and the output's tail where it helps) for the agent's next turn. */
export function renderTaskNotification(notification: TaskNotification): string {
  const task = `Background task ${notification.taskId} (${notification.description})`;
  switch (notification.kind) {
    case "finished":
      return `${task} finished${notification.exitCode === undefined ? "" : ` with exit code ${notification.exitCode}`}; ${formatBytes(notification.outputBytes)} of output.${notification.result === undefined ? "" : ` Its report:\n${notification.result}`}`;
    case "failed":
      return withTail(
        `${task} failed (${notification.reason}): ${notification.error ?? "no details"}.`,
        notification.tail,
      );
    case "stalled":
      return withTail(
        `${task} printed nothing for ${formatDuration(notification.quietMs)} and seems to wait for input (${notification.prompt}). Answer it with ${TASK_TOOL_NAMES.input}, stop it with ${TASK_TOOL_NAMES.stop}, or ask the user.`,
        notification.tail,
      );
    case "deadline":
      return withTail(
        `${task} is still running after ${formatDuration(notification.runningMs)}, past its deadline.`,
        notification.tail,
      );
    case "message":
      return `${task} sent a message from ${notification.from}:\n${notification.text}`;
    case "no_worker":
      return `${task} has waited ${formatDuration(notification.waitingMs)} in the queue, and no worker that runs ${notification.type} tasks is alive. Start one (createTaskWorker), or stop the task with ${TASK_TOOL_NAMES.stop}.`;
  }
}

/** Notifications as one attachment of kind "task-notification", or undefined when there are none. */
export function createTaskNotificationAttachment(
  notifications: readonly TaskNotification[],
): Attachment | undefined {
  if (notifications.length === 0) return undefined;
  return {
    kind: "task-notification",
    content: notifications.map(renderTaskNotification).join("\n\n"),
    source: "@unforget/tasks",
    metadata: { taskIds: [...new Set(notifications.map((n) => n.taskId))] },
  };
}

/**
 * A plugin that adds the task status to the context whenever the session restarts from a summary or a saved
 * transcript ("compact", "resume"), when the agent is most likely to have forgotten its background work.
 */
export function createTaskStatusPlugin(manager: TaskManager, options: TaskStatusOptions = {}): HookPlugin {
  return {
    name: "task-status",
    apply(hooks) {
      hooks.sessionStart.tapPromise("task-status", async (attachments, event) => {
        if (event.source !== "compact" && event.source !== "resume") return attachments;
        const attachment = createTaskStatusAttachment(await manager.list(), options);
        return attachment === undefined ? attachments : [...attachments, attachment];
      });
    },
  };
}
