import { constants, type Stats } from "node:fs";
import { lstat, open, readdir, rmdir } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { hashContent } from "../store/content-hash.ts";
import { MemoryPathError } from "../store/memory-errors.ts";
import { MEMORY_INDEX_NAME } from "../store/memory-index.ts";
import type { VersionLog } from "../store/memory-versions.ts";
import { errnoCode, isAbsent, isMissing, storeFileError } from "../store/store-file-errors.ts";

/** A memory file's text, read without following a symlink; `undefined` when there is no such file. */
export async function readMemoryFile(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (isMissing(error)) return undefined;
    if (errnoCode(error) === "ELOOP") {
      throw new MemoryPathError(`${path} is a symlink; memory files must be regular files.`, {
        name: path,
        rule: "symlink",
      });
    }
    throw storeFileError("The memory file", path, error);
  }
  try {
    return await handle.readFile("utf8");
  } catch (error) {
    throw storeFileError("The memory file", path, error);
  } finally {
    await handle.close();
  }
}

/** Walks the folder for `.md` files: hidden entries, symlinks and MEMORY.md are skipped. */
export async function walkMemoryFiles(root: string): Promise<Array<{ name: string; stats: Stats }>> {
  const found: Array<{ name: string; stats: Stats }> = [];
  const visit = async (folder: string): Promise<void> => {
    let children: string[];
    try {
      children = await readdir(folder);
    } catch (error) {
      // Removed while the walk ran: nothing to list there.
      if (isAbsent(error)) return;
      throw storeFileError("The memory folder", folder, error);
    }
    for (const child of children) {
      if (child.startsWith(".") || child === "node_modules") continue;
      const path = join(folder, child);
      const stats = await lstat(path).catch((error: unknown) => {
        if (isAbsent(error)) return undefined;
        throw storeFileError("The memory file", path, error);
      });
      if (!stats || stats.isSymbolicLink()) continue;
      if (stats.isDirectory()) await visit(path);
      else if (stats.isFile() && child.endsWith(".md")) {
        const name = relative(root, path).split(sep).join("/");
        if (name !== MEMORY_INDEX_NAME) found.push({ name: name.normalize("NFC"), stats });
      }
    }
  };
  await visit(root);
  return found;
}

/** Removes the folders a delete or rename left empty, up to (not including) the root. */
export async function removeEmptyFolders(root: string, path: string): Promise<void> {
  let folder = dirname(path);
  while (folder.startsWith(root + sep)) {
    try {
      await rmdir(folder);
    } catch {
      return;
    }
    folder = dirname(folder);
  }
}

/** Records content that was changed outside the store (an editor) before it is replaced. */
export async function recordExternalEdit(
  versions: VersionLog,
  name: string,
  current: string | undefined,
): Promise<void> {
  if (current === undefined) return;
  const latest = await versions.latest(name);
  const hash = hashContent(current);
  if (latest?.hash === hash) return;
  await versions.append({
    name,
    operation: "external",
    at: new Date().toISOString(),
    author: "unknown (changed outside the store)",
    hash,
    content: current,
  });
}
