import { join } from "node:path";

/** Everything a task keeps on disk lives in one folder named after its id. */
export function taskDirectory(dir: string, id: string): string {
  return join(dir, id);
}

/** The task's output: appended by the task, read by any number of readers with byte offsets. */
export function outputFile(taskFolder: string): string {
  return join(taskFolder, "output.log");
}

/** Written by a local_bash task's wrapper shell when the command ends: its exit status, whoever watches. */
export function exitStatusFile(taskFolder: string): string {
  return join(taskFolder, "exit");
}

/** Written by a local_bash task's wrapper shell first thing: the pid of the process group leader. */
export function pidFile(taskFolder: string): string {
  return join(taskFolder, "pid");
}
