import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export interface WriteFileAtomicOptions {
  /**
   * Folder for the temporary file, on the same file system as the target (so the rename is atomic); default
   * the target's folder, under a hidden name. A store that lists its folder passes a folder of its own.
   */
  tempDir?: string;
  /** fsync the file and its folder before returning (default true); false only for files that can be regenerated. */
  durable?: boolean;
  /** File mode of a new file; default 0o644. */
  mode?: number;
}

/**
 * Writes a file so that a reader sees the old content or the whole new one, even after a crash: a temporary
 * file, fsync, rename over the target, fsync of the folder. Creates missing folders. Anything that points at
 * the file may be written after this resolves, not before.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const folder = dirname(path);
  await mkdir(folder, { recursive: true });
  if (options.tempDir !== undefined) await mkdir(options.tempDir, { recursive: true });
  const temporary = join(options.tempDir ?? folder, `.${basename(path)}.${randomUUID()}.tmp`);
  const durable = options.durable !== false;
  const handle = await open(temporary, "wx", options.mode ?? 0o644);
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (durable) await syncFolder(folder);
}

/** Makes a rename durable; where folders cannot be opened (some platforms), the rename itself is still atomic. */
export async function syncFolder(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "r");
    await handle.sync();
  } catch {
    // Folder fsync is not supported everywhere.
  } finally {
    await handle?.close();
  }
}
