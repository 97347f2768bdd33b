import { type FileHandle, open } from "node:fs/promises";
import { TaskStateError } from "../task/task-errors.ts";

/** How an in-process job (agent, teammate, workflow step, dream) appends to its task's output. */
export interface TaskOutputWriter {
  /** Appends `text` as UTF-8; resolves once it is in the file. Rejects with `TaskStateError` after the task ended. */
  write(text: string): Promise<void>;
  /** Appends `text` and a newline. */
  line(text: string): Promise<void>;
}

/** A writer plus the close the manager calls when the task ends. */
export interface ClosableOutputWriter extends TaskOutputWriter {
  close(): Promise<void>;
}

/**
 * Appends in O_APPEND mode, so that a job's writes and a process writing the same file never overwrite each
 * other. Writes are serialised: each lands after the previous one, in call order. `assertHeld` is called
 * before each write and throws when the task may belong to another manager now: the text is then refused.
 */
export function createOutputWriter(
  path: string,
  taskId: string,
  assertHeld: () => void = () => undefined,
): ClosableOutputWriter {
  let handle: Promise<FileHandle> | undefined;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;

  const write = (text: string): Promise<void> => {
    if (closed) {
      return Promise.reject(
        new TaskStateError(`Task ${taskId} has ended; its output is closed and the text was not written.`, {
          taskId,
        }),
      );
    }
    try {
      assertHeld();
    } catch (error) {
      return Promise.reject(error);
    }
    handle ??= open(path, "a");
    const opened = handle;
    const next = queue.then(async () => {
      await (await opened).write(text);
    });
    // A failed write must not poison later ones; the caller still sees its own rejection.
    queue = next.catch(() => undefined);
    return next;
  };

  return {
    write,
    line: (text) => write(`${text}\n`),
    async close() {
      closed = true;
      await queue;
      if (handle !== undefined) await (await handle).close();
    },
  };
}
