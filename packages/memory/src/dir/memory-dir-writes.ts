import { lstat, mkdir, rename as renamePath, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { hashContent } from "../store/content-hash.ts";
import { describeMemory } from "../store/memory-catalog.ts";
import { MemoryConflictError, MemoryNotFoundError } from "../store/memory-errors.ts";
import { formatMemoryIndex, MEMORY_INDEX_NAME, memoryIndexPreamble } from "../store/memory-index.ts";
import { normalizeMemoryName, resolveMemoryPath } from "../store/memory-name.ts";
import {
  checkExpectedHash,
  checkMemoryContent,
  checkWriteOptions,
  headOf,
  refuseIndexName,
  replayWrite,
  type WriteAttempt,
} from "../store/memory-rules.ts";
import type { MemoryWriteOptions, MemoryWriteResult } from "../store/memory-store.ts";
import type { MemoryVersion, VersionLog } from "../store/memory-versions.ts";
import { type StoreLockOptions, withStoreLock } from "../store/store-lock.ts";
import type { SecretScanner } from "../team/secret-scan.ts";
import { type CatalogFiles, fileStamp } from "./memory-dir-catalog.ts";
import { readMemoryFile, recordExternalEdit, removeEmptyFolders } from "./memory-dir-files.ts";

/** What every operation of an open memory dir works on: its paths, derived files, version log and limits. */
export interface MemoryDirState {
  /** The folder's real path. */
  readonly root: string;
  /** Where atomic writes stage their temporary files. */
  readonly tempDir: string;
  /** The cross-process lock file. */
  readonly lockPath: string;
  /** MEMORY.md. */
  readonly indexPath: string;
  readonly catalogFiles: CatalogFiles;
  readonly versions: VersionLog;
  readonly limits: { maxFileBytes: number; secretScanner: SecretScanner | undefined };
  /** The author of a change whose call names none. */
  readonly defaultAuthor: string;
  readonly lock: StoreLockOptions | undefined;
}

/** Runs `task` holding the dir's cross-process lock. */
export function locked<T>(state: MemoryDirState, task: () => Promise<T>): Promise<T> {
  return withStoreLock(state.lockPath, task, state.lock);
}

/** Under the lock: the first outcome of a call with this `writeId`, when it ran before. */
async function replayed(state: MemoryDirState, writeOptions: MemoryWriteOptions, attempt: WriteAttempt) {
  if (writeOptions.writeId === undefined) return undefined;
  const first = await state.versions.recall(writeOptions.writeId);
  return first === undefined ? undefined : replayWrite(writeOptions.writeId, first, attempt);
}

/** Under the lock: keeps the outcome of a call with a `writeId`, so a retry of it is answered the same. */
async function remember(state: MemoryDirState, writeOptions: MemoryWriteOptions, attempt: WriteAttempt) {
  if (writeOptions.writeId === undefined) return;
  await state.versions.remember({
    writeId: writeOptions.writeId,
    name: attempt.name,
    operation: attempt.operation as MemoryVersion["operation"],
    hash: attempt.hash ?? null,
  });
}

/** The version record of one operation: who, when, why, and the content it left. */
function versionRecord(
  state: MemoryDirState,
  name: string,
  operation: MemoryVersion["operation"],
  content: string,
  writeOptions: MemoryWriteOptions,
): Omit<MemoryVersion, "id"> {
  const record: Omit<MemoryVersion, "id"> = {
    name,
    operation,
    at: new Date().toISOString(),
    author: writeOptions.author ?? state.defaultAuthor,
    hash: hashContent(content),
    content,
  };
  if (writeOptions.reason !== undefined) record.reason = writeOptions.reason;
  return record;
}

/** `MemoryStore.write` on a memory dir: checked, compare-and-swap under the lock, versioned, catalogued. */
export async function writeMemory(
  state: MemoryDirState,
  name: string,
  content: string,
  writeOptions: MemoryWriteOptions,
): Promise<MemoryWriteResult> {
  const { root, tempDir, versions, catalogFiles } = state;
  const checked = normalizeMemoryName(name);
  checkWriteOptions(writeOptions);
  const warnings = await checkMemoryContent(checked, content, state.limits);
  const reported = warnings.length === 0 ? {} : { warnings };
  const path = await resolveMemoryPath(root, checked);
  const attempt: WriteAttempt = { name: checked, operation: "write", hash: hashContent(content) };
  return locked(state, async () => {
    const again = await replayed(state, writeOptions, attempt);
    if (again) return { hash: again.hash ?? "" };
    await resolveMemoryPath(root, checked);
    const current = await readMemoryFile(path);
    checkExpectedHash(checked, writeOptions.expectedHash, headOf(current));
    const entries = await catalogFiles.load();
    if (checked === MEMORY_INDEX_NAME) {
      const next = formatMemoryIndex(memoryIndexPreamble(content), entries.values());
      await recordExternalEdit(versions, checked, current);
      await writeFileAtomic(path, next, { tempDir });
      await versions.append(versionRecord(state, checked, "write", next, writeOptions));
      return { hash: hashContent(next), ...reported };
    }
    // The same content again makes no new version: the store already holds what the caller wants.
    if (current !== content) {
      await recordExternalEdit(versions, checked, current);
      await writeFileAtomic(path, content, { tempDir });
      await versions.append(versionRecord(state, checked, "write", content, writeOptions));
      const stats = await lstat(path);
      entries.set(checked, describeMemory(checked, content, fileStamp(stats)));
      await catalogFiles.persist(entries);
    }
    await remember(state, writeOptions, attempt);
    return { hash: attempt.hash as string, ...reported };
  });
}

/** `MemoryStore.delete` on a memory dir: the last content is kept as a version. */
export async function deleteMemory(
  state: MemoryDirState,
  name: string,
  writeOptions: MemoryWriteOptions,
): Promise<void> {
  const { root, versions, catalogFiles } = state;
  const checked = normalizeMemoryName(name);
  refuseIndexName(checked, "deleted");
  checkWriteOptions(writeOptions);
  const path = await resolveMemoryPath(root, checked);
  const attempt: WriteAttempt = { name: checked, operation: "delete", hash: null };
  await locked(state, async () => {
    if (await replayed(state, writeOptions, attempt)) return;
    const current = await readMemoryFile(path);
    if (current === undefined) {
      throw new MemoryNotFoundError(`${checked} does not exist; nothing was deleted.`, {
        memoryName: checked,
      });
    }
    checkExpectedHash(checked, writeOptions.expectedHash, headOf(current));
    await recordExternalEdit(versions, checked, current);
    await versions.append({ ...versionRecord(state, checked, "delete", current, writeOptions), hash: null });
    await rm(path);
    await removeEmptyFolders(root, path);
    const entries = await catalogFiles.load();
    entries.delete(checked);
    await catalogFiles.persist(entries);
    await remember(state, writeOptions, attempt);
  });
}

/** `MemoryStore.rename` on a memory dir: never over an existing memory; both names get a version. */
export async function renameMemory(
  state: MemoryDirState,
  from: string,
  to: string,
  writeOptions: MemoryWriteOptions,
): Promise<MemoryWriteResult> {
  const { root } = state;
  const source = normalizeMemoryName(from);
  const target = normalizeMemoryName(to);
  refuseIndexName(source, "renamed");
  refuseIndexName(target, "overwritten by a rename");
  checkWriteOptions(writeOptions);
  const sourcePath = await resolveMemoryPath(root, source);
  const targetPath = await resolveMemoryPath(root, target);
  return locked(state, async () => {
    const again = await replayed(state, writeOptions, { name: target, operation: "rename-to" });
    if (again) return { hash: again.hash ?? "" };
    const current = await readMemoryFile(sourcePath);
    if (current === undefined) {
      throw new MemoryNotFoundError(`${source} does not exist; nothing was renamed.`, {
        memoryName: source,
      });
    }
    checkExpectedHash(source, writeOptions.expectedHash, headOf(current));
    const existing = await readMemoryFile(targetPath);
    if (existing !== undefined) {
      throw new MemoryConflictError(`${target} already exists; rename to another name or delete it first.`, {
        memoryName: target,
        expectedHash: null,
        actualHash: hashContent(existing),
      });
    }
    await recordExternalEdit(state.versions, source, current);
    await mkdir(dirname(targetPath), { recursive: true });
    await resolveMemoryPath(root, target);
    await renamePath(sourcePath, targetPath);
    await removeEmptyFolders(root, sourcePath);
    await recordRename(state, source, target, current, writeOptions);
    const entries = await state.catalogFiles.load();
    entries.delete(source);
    entries.set(target, describeMemory(target, current, fileStamp(await lstat(targetPath))));
    await state.catalogFiles.persist(entries);
    const hash = hashContent(current);
    await remember(state, writeOptions, { name: target, operation: "rename-to", hash });
    return { hash };
  });
}

/** The two versions a rename leaves: "rename-from" on the old name, "rename-to" on the new one. */
async function recordRename(
  state: MemoryDirState,
  source: string,
  target: string,
  content: string,
  writeOptions: MemoryWriteOptions,
): Promise<void> {
  const at = new Date().toISOString();
  const author = writeOptions.author ?? state.defaultAuthor;
  const reason = writeOptions.reason;
  const common = { at, author, content, ...(reason === undefined ? {} : { reason }) };
  const writeId = writeOptions.writeId === undefined ? {} : { writeId: writeOptions.writeId };
  await state.versions.append({
    ...common,
    ...writeId,
    name: source,
    operation: "rename-from",
    hash: null,
    otherName: target,
  });
  await state.versions.append({
    ...common,
    ...writeId,
    name: target,
    operation: "rename-to",
    hash: hashContent(content),
    otherName: source,
  });
}
