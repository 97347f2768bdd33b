import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * Writes `data` to `path` so that a reader sees either the old file or the whole new one, even after a crash:
 * a temporary file in `tempDir` (same file system), fsync, rename over the target, fsync of the folder.
 */
export async function writeFileAtomic(path: string, data: string, tempDir: string): Promise<void> {
  await mkdir(tempDir, { recursive: true });
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(tempDir, `${randomUUID()}.tmp`);
  const handle = await open(temporary, "wx", 0o644);
  try {
    await handle.writeFile(data, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await syncFolder(dirname(path));
}

/** Makes a rename durable; some platforms cannot open folders, where there is nothing to do. */
export async function syncFolder(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "r");
    await handle.sync();
  } catch {
    // Folder fsync is not supported everywhere (e.g. Windows); the rename itself is still atomic.
  } finally {
    await handle?.close();
  }
}
