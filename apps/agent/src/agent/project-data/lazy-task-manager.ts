import { readdir } from "node:fs/promises";
import type { TaskManager, TaskManagerOptions } from "@unforget/tasks";

/** The manager once opened (one promise, whoever asks first), and how to open it. */
interface LazyState {
  options: TaskManagerOptions & { dir: string };
  opened: Promise<TaskManager> | undefined;
}

/**
 * A task manager over `options.dir` that loads `@unforget/tasks` and opens the real manager (which reconciles
 * the tasks earlier runs left) on first use: the first task started, read, listed or stopped, or the first
 * notifications asked for while the folder holds any task. A run that never starts a task and finds none from
 * earlier runs (`unforget -p` with nothing configured) loads none of it.
 */
export function createLazyTaskManager(options: TaskManagerOptions & { dir: string }): TaskManager {
  const state: LazyState = { options, opened: undefined };
  return {
    dir: options.dir,
    start: async (spec) => (await open(state)).start(spec),
    write: async (id, input, writeOptions) => (await open(state)).write(id, input, writeOptions),
    stop: async (id) => (await open(state)).stop(id),
    get: async (id) => (await open(state)).get(id),
    list: async () => (await open(state)).list(),
    readOutput: async (id, offset, readOptions) => (await open(state)).readOutput(id, offset, readOptions),
    takeNotifications: () => takeNotifications(state),
    wait: async (id, waitOptions) => (await open(state)).wait(id, waitOptions),
    close: () => close(state),
  };
}

function open(state: LazyState): Promise<TaskManager> {
  state.opened ??= import("@unforget/tasks").then(({ createTaskManager }) =>
    createTaskManager(state.options),
  );
  return state.opened;
}

/**
 * Before each model call. Notifications come from tasks, and a manager raises those of earlier runs' tasks when it
 * opens: with no task in the folder (and none started), there is nothing to open the manager for.
 */
async function takeNotifications(state: LazyState) {
  if (state.opened === undefined && !(await holdsTask(state.options.dir))) return [];
  return (await open(state)).takeNotifications();
}

async function close(state: LazyState): Promise<void> {
  if (state.opened !== undefined) await (await state.opened).close();
}

/** Whether the folder holds a task: one folder per task, named by its id; ids never start with a dot (`.leases`). */
async function holdsTask(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).some((name) => !name.startsWith("."));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}
