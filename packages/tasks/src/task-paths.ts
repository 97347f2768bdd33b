import { join } from "node:path";

/** Everything a task keeps on disk lives in one folder named after its id. */
export function taskDirectory(dir: string, id: string): string {
  return join(dir, id);
}

/** The task's output: appended by the task, read by any number of readers with byte offsets. */
export function taskOutputPath(dir: string, id: string): string {
  return join(dir, id, "output.log");
}

/** Written by a local_bash task's wrapper shell when the command ends: its exit status, whoever watches. */
export function taskExitPath(dir: string, id: string): string {
  return join(dir, id, "exit");
}

/** Written by a local_bash task's wrapper shell first thing: the pid of the process group leader. */
export function taskPidPath(dir: string, id: string): string {
  return join(dir, id, "pid");
}
