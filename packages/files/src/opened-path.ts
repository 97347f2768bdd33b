import { constants, fstat as fstatWithCallback } from "node:fs";
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises";
import { promisify } from "node:util";
import { UnsafePathError } from "./confine-path.ts";

/**
 * `confinePath` checks a path, and the caller opens it afterwards: a folder on the path swapped for a symbolic
 * link in between would make the open land outside the roots. Node has no `openat`, so the check and the open
 * cannot be one call; instead, what was opened is checked after the open, against the kernel's own record of
 * it. On Linux that is `/proc/self/fd/N`, the real path of the opened file as it was resolved by the open
 * itself: exact. Where there is no `/proc` (macOS, Windows), the path is resolved again and must lead to the
 * same file (device and inode) at the same real path: a swap that is undone between the open and this second
 * look is not caught there.
 */

/** `/proc/self/fd`, where the kernel shows what each descriptor of this process refers to (Linux). */
const PROC_DESCRIPTORS = "/proc/self/fd";
const fstat = promisify(fstatWithCallback);

let procAvailable: boolean | undefined;

async function hasProc(): Promise<boolean> {
  procAvailable ??= await stat(PROC_DESCRIPTORS).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  return procAvailable;
}

function swapped(path: string, opened: string): UnsafePathError {
  return new UnsafePathError(
    `The path ${JSON.stringify(path)} changed while it was being opened: it led to ${JSON.stringify(opened)} (a folder on the way was replaced, e.g. by a symbolic link). It was not used; try again once the folders stop changing.`,
    { path, rule: "swapped" },
  );
}

/**
 * Throws `UnsafePathError` (rule `swapped`) unless the open descriptor `descriptor` refers to the file at
 * `expected`, a real path as `confinePath` returned it: the check `confinePath` made then holds for what was
 * actually opened.
 */
export async function checkOpenedPath(descriptor: number, expected: string): Promise<void> {
  if (await hasProc()) {
    const opened = await readlink(`${PROC_DESCRIPTORS}/${descriptor}`);
    if (opened !== expected) throw swapped(expected, opened);
    return;
  }
  const [openedStats, real] = await Promise.all([fstat(descriptor), realpath(expected).catch(() => "")]);
  const atPath = real === expected ? await stat(expected).catch(() => undefined) : undefined;
  if (atPath === undefined || atPath.dev !== openedStats.dev || atPath.ino !== openedStats.ino) {
    throw swapped(expected, real === "" ? "somewhere else" : real);
  }
}

/** A folder held open, and a path that names it without resolving its path again. */
export interface AnchoredFolder {
  /**
   * Names the opened folder itself: `/proc/self/fd/N` on Linux, so a name joined to it is found in that very
   * folder whatever happens to the folders above it (as `openat` would); the folder's real path elsewhere.
   */
  readonly path: string;
  /** Releases the folder; call it once the operations under `path` are done. */
  close(): Promise<void>;
}

/**
 * Opens the folder at `folder` (a real path from `confinePath`), checks with `checkOpenedPath` that the folder
 * opened is that one, and returns a path through which files in it are created, renamed and read without
 * their folders being resolved again. Throws `UnsafePathError` when the folder was swapped, or the file
 * system's error when it cannot be opened.
 */
export async function anchorFolder(folder: string): Promise<AnchoredFolder> {
  let handle: FileHandle;
  try {
    handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ELOOP" || (error as { code?: unknown }).code === "ENOTDIR") {
      throw swapped(folder, "a symbolic link or a file");
    }
    throw error;
  }
  try {
    await checkOpenedPath(handle.fd, folder);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const path = (await hasProc()) ? `${PROC_DESCRIPTORS}/${handle.fd}` : folder;
  return { path, close: () => handle.close() };
}
