import type { BigIntStats } from "node:fs";
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { checkOpenedPath } from "@unforget/files";
import { ToolCallError } from "../tool-errors.ts";

/** An open regular file and what `fstat` said about it. */
export interface OpenedFile {
  handle: FileHandle;
  stats: BigIntStats;
}

function kindOf(stats: BigIntStats): string {
  if (stats.isDirectory()) return "a directory: list it with Glob (or Bash's ls)";
  if (stats.isFIFO())
    return "a named pipe (FIFO): reading it could wait forever, so the file tools do not open it";
  if (stats.isSocket()) return "a socket, not a file";
  if (stats.isCharacterDevice() || stats.isBlockDevice())
    return "a device, not a file; the file tools do not read devices";
  return "not a regular file";
}

/**
 * Opens `path` (a real path from `resolveToolPath`) for reading, or resolves undefined when it does not exist.
 * `O_NOFOLLOW` refuses a last component that became a symlink after the path was checked; `O_NONBLOCK` keeps a
 * FIFO swapped in from blocking the open; `checkOpenedPath` refuses a file reached through a folder swapped
 * for a symlink in the meantime (`UnsafePathError`). Anything but a regular file is closed and refused.
 */
export async function openRegularFile(path: string, shownPath: string): Promise<OpenedFile | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") {
      throw new ToolCallError(`${shownPath} became a symbolic link while it was being opened; try again.`, {
        cause: error,
      });
    }
    throw error;
  }
  try {
    await checkOpenedPath(handle.fd, path);
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) throw new ToolCallError(`${shownPath} is ${kindOf(stats)}.`);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
