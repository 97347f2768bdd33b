import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Writes a file so that readers see the old content or the new, never a part: a temporary file beside it,
 * flushed to disk (unless `durable` is false, for many small files that can be regenerated), then renamed
 * over the target.
 */
export async function writeFileAtomic(
  path: string,
  data: string,
  options: { durable?: boolean } = {},
): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const handle = await open(temporary, "w");
  try {
    await handle.writeFile(data, "utf8");
    if (options.durable !== false) await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, path);
}
