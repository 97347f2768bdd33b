import { randomUUID } from "node:crypto";
import { link, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { describeError, TaskStoreError } from "../task/task-errors.ts";
import { assertTaskId } from "../task/task-id.ts";
import { taskDirectory } from "../task/task-paths.ts";
import type { TaskCommand, TaskCommandResult, TaskCommandStore } from "./task-backend.ts";

const COMMAND_FILE = /^(\d{15})-[0-9a-f-]{36}\.json$/;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/**
 * Commands as files in the task's folder: `commands/<sentAt>-<uuid>.json`, answered by a `.ack` file beside
 * it. The answer is hard-linked into place, so the first answer stands and a reader never sees half of one.
 */
export function createFileTaskCommands(dir: string): TaskCommandStore {
  const folderOf = (taskId: string) => {
    assertTaskId(taskId, "taskId");
    return join(taskDirectory(dir, taskId), "commands");
  };
  const nameOf = (command: TaskCommand) => `${String(command.sentAt).padStart(15, "0")}-${command.id}.json`;
  const fail = (what: string, location: string, error: unknown): never => {
    throw new TaskStoreError(`Could not ${what} ${location} (${describeError(error)}).`, {
      location,
      cause: error,
    });
  };

  return {
    async send(init) {
      const command: TaskCommand = { ...init, id: randomUUID(), sentAt: Date.now() };
      const path = join(folderOf(init.taskId), nameOf(command));
      await writeFileAtomic(path, `${JSON.stringify(command)}\n`).catch((error: unknown) =>
        fail("write", path, error),
      );
      return command;
    },

    async pending(taskId) {
      const folder = folderOf(taskId);
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (error) {
        if (isMissing(error)) return [];
        return fail("list", folder, error);
      }
      const answered = new Set(
        names.filter((name) => name.endsWith(".ack")).map((name) => name.slice(0, -4)),
      );
      const commands: TaskCommand[] = [];
      for (const name of names.filter((entry) => COMMAND_FILE.test(entry) && !answered.has(entry)).sort()) {
        const text = await readFile(join(folder, name), "utf8").catch(() => undefined);
        if (text !== undefined) commands.push(JSON.parse(text) as TaskCommand);
      }
      return commands;
    },

    async acknowledge(command, result) {
      const target = join(folderOf(command.taskId), `${nameOf(command)}.ack`);
      const temporary = `${target}.${randomUUID()}.tmp`;
      try {
        await writeFileAtomic(temporary, `${JSON.stringify(result)}\n`);
        await link(temporary, target).catch((error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        });
      } catch (error) {
        fail("write", target, error);
      } finally {
        await rm(temporary, { force: true });
      }
    },

    async result(command) {
      const path = join(folderOf(command.taskId), `${nameOf(command)}.ack`);
      try {
        return JSON.parse(await readFile(path, "utf8")) as TaskCommandResult;
      } catch (error) {
        if (isMissing(error)) return undefined;
        return fail("read", path, error);
      }
    },
  };
}
