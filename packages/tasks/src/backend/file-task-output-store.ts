import { stat } from "node:fs/promises";
import { readFileBytes } from "../output/task-output.ts";
import { assertTaskId } from "../task/task-id.ts";
import { outputFile, taskDirectory } from "../task/task-paths.ts";
import type { TaskOutputStore } from "./task-backend.ts";

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/**
 * The output of the tasks in `dir`, read from the files the tasks append to: what is in the file is
 * committed. One attempt per task: a task adopted after its manager died goes on writing the same file.
 */
export function createFileTaskOutputStore(dir: string): TaskOutputStore {
  const pathOf = (id: string) => {
    assertTaskId(id);
    return outputFile(taskDirectory(dir, id));
  };
  return {
    async stat(id) {
      const stats = await stat(pathOf(id)).catch((error: unknown) => {
        if (isMissing(error)) return undefined;
        throw error;
      });
      if (stats === undefined || stats.size === 0) return { size: stats?.size ?? 0 };
      return { size: stats.size, lastWriteAt: Math.round(stats.mtimeMs) };
    },
    read: (id, offset, maxBytes) => readFileBytes(pathOf(id), offset, maxBytes),
    localPath: (id) => pathOf(id),
  };
}
