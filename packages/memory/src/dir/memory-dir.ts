import { lstat, mkdir, readFile, realpath, rename as renamePath, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ConfigurationError } from "@unforget/core";
import { writeFileAtomic } from "@unforget/files";
import { prefilterCatalogText, prefilterMemories } from "../retrieve/memory-prefilter.ts";
import { hashContent } from "../store/content-hash.ts";
import { describeMemory, readCatalogFile, readCatalogText } from "../store/memory-catalog.ts";
import { MemoryConflictError, MemoryNotFoundError } from "../store/memory-errors.ts";
import {
  formatMemoryIndex,
  type LoadedMemoryIndex,
  MEMORY_INDEX_NAME,
  type MemoryIndexLimits,
  memoryIndexPreamble,
  truncateMemoryIndex,
} from "../store/memory-index.ts";
import { normalizeMemoryName, resolveMemoryPath } from "../store/memory-name.ts";
import {
  checkExpectedHash,
  checkKeep,
  checkMemoryContent,
  checkWriteOptions,
  headOf,
  redactionReason,
  refuseHeadRedaction,
  refuseIndexName,
  replayWrite,
  restoreVersion,
  type WriteAttempt,
} from "../store/memory-rules.ts";
import type { MemoryContent, MemoryStore, MemoryWriteOptions } from "../store/memory-store.ts";
import { createVersionLog, type MemoryVersion } from "../store/memory-versions.ts";
import { isAbsent, storeFileError } from "../store/store-file-errors.ts";
import { type StoreLockOptions, withStoreLock } from "../store/store-lock.ts";
import type { SecretScanner } from "../team/secret-scan.ts";
import { createCatalogFiles, fileStamp } from "./memory-dir-catalog.ts";
import { readMemoryFile, recordExternalEdit, removeEmptyFolders } from "./memory-dir-files.ts";
import { defaultMemoryRoot } from "./memory-root.ts";

/** Largest memory file accepted, in bytes (the per-memory cap of Anthropic's memory stores). */
export const DEFAULT_MAX_MEMORY_BYTES = 100_000;
/** The hidden folder inside a memory dir that holds the catalog, versions, proposals and the lock. */
export const STORE_FOLDER = ".unforget";

export interface MemoryDirOptions {
  /** The memory folder; created if missing. One of `root` and `projectPath` is required. */
  root?: string;
  /**
   * The project whose memory this is: the folder is then `defaultMemoryRoot(projectPath)`, under the user's
   * config home, keyed by the project's absolute path.
   */
  projectPath?: string;
  /** Default author of changes ("session:<id>", "agent:<name>"); a call's `author` wins. Default "unknown". */
  author?: string;
  /** Largest memory file in bytes. Default 100,000. */
  maxFileBytes?: number;
  /** MEMORY.md loading limits. Default 200 lines / 25,000 bytes. */
  indexLimits?: MemoryIndexLimits;
  /** Cross-process lock timing. */
  lock?: StoreLockOptions;
  /** Scans every write; a finding refuses it with `MemorySecretError` (team memory sets this). */
  secretScanner?: SecretScanner;
}

/** A memory dir: the `MemoryStore` on a local folder. */
export interface MemoryDir extends MemoryStore {
  /** The folder's real path. */
  readonly root: string;
  /** The hidden store folder (catalog, versions, proposals, dream state). */
  readonly storeFolder: string;
}

/**
 * Opens (creating if needed) a memory dir: topic files with YAML frontmatter, a MEMORY.md index kept in
 * step with them, compare-and-swap writes under a cross-process lock, and every version kept in a hidden
 * folder. Safe for several processes writing at once: a write that raced another fails with
 * `MemoryConflictError` when it named the hash it read, and is never silently lost.
 */
export async function createMemoryDir(options: MemoryDirOptions): Promise<MemoryDir> {
  const requested =
    options.root ?? (options.projectPath === undefined ? undefined : defaultMemoryRoot(options.projectPath));
  if (requested === undefined) {
    throw new ConfigurationError(
      "createMemoryDir needs `root` (a folder) or `projectPath` (the project it belongs to).",
      {
        setting: "root",
      },
    );
  }
  await mkdir(requested, { recursive: true });
  const root = await realpath(requested);
  const storeFolder = join(root, STORE_FOLDER);
  const tempDir = join(storeFolder, "tmp");
  const catalogFiles = createCatalogFiles(root, storeFolder, tempDir);
  const { catalogPath, searchPath } = catalogFiles;
  const lockPath = join(storeFolder, "store");
  const indexPath = join(root, MEMORY_INDEX_NAME);
  const limits = {
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_MEMORY_BYTES,
    secretScanner: options.secretScanner,
  };
  const defaultAuthor = options.author ?? "unknown";
  const versions = createVersionLog(storeFolder, tempDir);
  await mkdir(storeFolder, { recursive: true });

  const locked = <T>(task: () => Promise<T>) => withStoreLock(lockPath, task, options.lock);

  /** Under the lock: the first outcome of a call with this `writeId`, when it ran before. */
  const replayed = async (writeOptions: MemoryWriteOptions, attempt: WriteAttempt) => {
    if (writeOptions.writeId === undefined) return undefined;
    const first = await versions.recall(writeOptions.writeId);
    return first === undefined ? undefined : replayWrite(writeOptions.writeId, first, attempt);
  };
  const remember = async (writeOptions: MemoryWriteOptions, attempt: WriteAttempt) => {
    if (writeOptions.writeId === undefined) return;
    await versions.remember({
      writeId: writeOptions.writeId,
      name: attempt.name,
      operation: attempt.operation as MemoryVersion["operation"],
      hash: attempt.hash ?? null,
    });
  };

  const store: MemoryDir = {
    root,
    storeFolder,
    location: root,

    async read(name) {
      const checked = normalizeMemoryName(name);
      const content = await readMemoryFile(await resolveMemoryPath(root, checked));
      if (content === undefined) {
        throw new MemoryNotFoundError(
          `${checked} does not exist in ${root}; list the memories to see what does.`,
          {
            memoryName: checked,
          },
        );
      }
      return { content, hash: hashContent(content) } satisfies MemoryContent;
    },

    async write(name, content, writeOptions: MemoryWriteOptions = {}) {
      const checked = normalizeMemoryName(name);
      checkWriteOptions(writeOptions);
      const warnings = await checkMemoryContent(checked, content, limits);
      const reported = warnings.length === 0 ? {} : { warnings };
      const path = await resolveMemoryPath(root, checked);
      const attempt: WriteAttempt = { name: checked, operation: "write", hash: hashContent(content) };
      return locked(async () => {
        const again = await replayed(writeOptions, attempt);
        if (again) return { hash: again.hash ?? "" };
        await resolveMemoryPath(root, checked);
        const current = await readMemoryFile(path);
        checkExpectedHash(checked, writeOptions.expectedHash, headOf(current));
        const entries = await catalogFiles.load();
        if (checked === MEMORY_INDEX_NAME) {
          const next = formatMemoryIndex(memoryIndexPreamble(content), entries.values());
          await recordExternalEdit(versions, checked, current);
          await writeFileAtomic(path, next, { tempDir });
          await versions.append(versionRecord(checked, "write", next, writeOptions));
          return { hash: hashContent(next), ...reported };
        }
        // The same content again makes no new version: the store already holds what the caller wants.
        if (current !== content) {
          await recordExternalEdit(versions, checked, current);
          await writeFileAtomic(path, content, { tempDir });
          await versions.append(versionRecord(checked, "write", content, writeOptions));
          const stats = await lstat(path);
          entries.set(checked, describeMemory(checked, content, fileStamp(stats)));
          await catalogFiles.persist(entries);
        }
        await remember(writeOptions, attempt);
        return { hash: attempt.hash as string, ...reported };
      });
    },

    async delete(name, writeOptions: MemoryWriteOptions = {}) {
      const checked = normalizeMemoryName(name);
      refuseIndexName(checked, "deleted");
      checkWriteOptions(writeOptions);
      const path = await resolveMemoryPath(root, checked);
      const attempt: WriteAttempt = { name: checked, operation: "delete", hash: null };
      await locked(async () => {
        if (await replayed(writeOptions, attempt)) return;
        const current = await readMemoryFile(path);
        if (current === undefined) {
          throw new MemoryNotFoundError(`${checked} does not exist; nothing was deleted.`, {
            memoryName: checked,
          });
        }
        checkExpectedHash(checked, writeOptions.expectedHash, headOf(current));
        await recordExternalEdit(versions, checked, current);
        await versions.append({ ...versionRecord(checked, "delete", current, writeOptions), hash: null });
        await rm(path);
        await removeEmptyFolders(root, path);
        const entries = await catalogFiles.load();
        entries.delete(checked);
        await catalogFiles.persist(entries);
        await remember(writeOptions, attempt);
      });
    },

    async rename(from, to, writeOptions: MemoryWriteOptions = {}) {
      const source = normalizeMemoryName(from);
      const target = normalizeMemoryName(to);
      refuseIndexName(source, "renamed");
      refuseIndexName(target, "overwritten by a rename");
      checkWriteOptions(writeOptions);
      const sourcePath = await resolveMemoryPath(root, source);
      const targetPath = await resolveMemoryPath(root, target);
      return locked(async () => {
        const again = await replayed(writeOptions, { name: target, operation: "rename-to" });
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
          throw new MemoryConflictError(
            `${target} already exists; rename to another name or delete it first.`,
            { memoryName: target, expectedHash: null, actualHash: hashContent(existing) },
          );
        }
        await recordExternalEdit(versions, source, current);
        await mkdir(dirname(targetPath), { recursive: true });
        await resolveMemoryPath(root, target);
        await renamePath(sourcePath, targetPath);
        await removeEmptyFolders(root, sourcePath);
        const at = new Date().toISOString();
        const author = writeOptions.author ?? defaultAuthor;
        const reason = writeOptions.reason;
        const common = { at, author, content: current, ...(reason === undefined ? {} : { reason }) };
        const writeId = writeOptions.writeId === undefined ? {} : { writeId: writeOptions.writeId };
        await versions.append({
          ...common,
          ...writeId,
          name: source,
          operation: "rename-from",
          hash: null,
          otherName: target,
        });
        await versions.append({
          ...common,
          ...writeId,
          name: target,
          operation: "rename-to",
          hash: hashContent(current),
          otherName: source,
        });
        const entries = await catalogFiles.load();
        entries.delete(source);
        entries.set(target, describeMemory(target, current, fileStamp(await lstat(targetPath))));
        await catalogFiles.persist(entries);
        const hash = hashContent(current);
        await remember(writeOptions, { name: target, operation: "rename-to", hash });
        return { hash };
      });
    },

    async list() {
      const entries = await locked(catalogFiles.refresh);
      return [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
    },

    async catalog() {
      const entries = (await readCatalogFile(catalogPath)) ?? (await locked(catalogFiles.refresh));
      return [...entries.values()];
    },

    async search(query, searchOptions) {
      const [catalog, search] = await Promise.all([
        readCatalogText(catalogPath),
        readFile(searchPath, "utf8").catch(() => ""),
      ]);
      const fast =
        catalog === undefined ? undefined : prefilterCatalogText({ catalog, search }, query, searchOptions);
      if (fast) return fast;
      // Missing, stale, or replaced between the two reads by a writer: rebuild, and rank over the parsed catalog.
      return prefilterMemories(await store.list(), query, searchOptions);
    },

    async loadIndex(): Promise<LoadedMemoryIndex> {
      const bytes = await readFile(indexPath).catch((error: unknown) => {
        // No MEMORY.md yet: the index is built from the catalog. An unreadable one is an error, never replaced.
        if (isAbsent(error)) return undefined;
        throw storeFileError("The memory index", indexPath, error);
      });
      if (bytes === undefined) {
        return truncateMemoryIndex(
          formatMemoryIndex(memoryIndexPreamble(undefined), await store.catalog()),
          options.indexLimits,
        );
      }
      return truncateMemoryIndex(bytes, options.indexLimits);
    },

    async versionedNames() {
      return versions.names();
    },

    async listVersions(name) {
      return versions.list(normalizeMemoryName(name));
    },

    async readVersion(name, versionId) {
      return versions.read(normalizeMemoryName(name), versionId);
    },

    restore(name, versionId, writeOptions) {
      return restoreVersion(store, name, versionId, writeOptions);
    },

    async redactVersion(name, versionId, redactOptions = {}) {
      const checked = normalizeMemoryName(name);
      return locked(async () => {
        const version = await versions.read(checked, versionId);
        const current = await readMemoryFile(await resolveMemoryPath(root, checked));
        refuseHeadRedaction(version, current === undefined ? null : hashContent(current));
        if (version.redactedAt !== undefined) return version;
        const redacted: MemoryVersion = {
          ...version,
          content: "",
          redactedAt: new Date().toISOString(),
          reason: redactionReason(redactOptions, defaultAuthor),
        };
        await versions.replace(redacted);
        return redacted;
      });
    },

    async pruneVersions(name, pruneOptions) {
      const checked = normalizeMemoryName(name);
      const keep = checkKeep(pruneOptions.keep);
      return locked(async () => {
        const all = await versions.list(checked);
        const current = await readMemoryFile(await resolveMemoryPath(root, checked));
        const head = current === undefined ? undefined : hashContent(current);
        const headId = all.find((version) => head !== undefined && version.hash === head)?.id;
        const removed = all
          .slice(keep)
          .filter((version) => version.id !== headId)
          .map((version) => version.id);
        await versions.remove(checked, removed);
        return { removed: removed.length };
      });
    },
  };

  function versionRecord(
    name: string,
    operation: MemoryVersion["operation"],
    content: string,
    writeOptions: MemoryWriteOptions,
  ): Omit<MemoryVersion, "id"> {
    const record: Omit<MemoryVersion, "id"> = {
      name,
      operation,
      at: new Date().toISOString(),
      author: writeOptions.author ?? defaultAuthor,
      hash: hashContent(content),
      content,
    };
    if (writeOptions.reason !== undefined) record.reason = writeOptions.reason;
    return record;
  }

  return store;
}
