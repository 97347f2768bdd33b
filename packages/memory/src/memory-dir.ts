import { constants, type Stats } from "node:fs";
import {
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  realpath,
  rename as renamePath,
  rm,
  rmdir,
} from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { ConfigurationError } from "@unforget/core";
import { writeFileAtomic } from "./atomic-write.ts";
import { hashContent } from "./content-hash.ts";
import {
  describeMemory,
  formatCatalog,
  formatSearchIndex,
  linkSupersession,
  type MemoryEntry,
  readCatalogFile,
  readCatalogText,
} from "./memory-catalog.ts";
import {
  MemoryConflictError,
  MemoryLimitError,
  MemoryNotFoundError,
  MemoryPathError,
  MemorySecretError,
} from "./memory-errors.ts";
import { parseMemoryFile } from "./memory-frontmatter.ts";
import {
  formatMemoryIndex,
  type LoadedMemoryIndex,
  MEMORY_INDEX_NAME,
  type MemoryIndexLimits,
  memoryIndexPreamble,
  truncateMemoryIndex,
} from "./memory-index.ts";
import { normalizeMemoryName, resolveMemoryPath } from "./memory-name.ts";
import { prefilterCatalogText, prefilterMemories } from "./memory-prefilter.ts";
import { defaultMemoryRoot } from "./memory-root.ts";
import type { MemoryContent, MemoryStore, MemoryWriteOptions } from "./memory-store.ts";
import { createVersionLog, type MemoryVersion } from "./memory-versions.ts";
import type { SecretScanner } from "./secret-scan.ts";
import { type StoreLockOptions, withStoreLock } from "./store-lock.ts";

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

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR";
}

async function readNoFollow(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** Walks the folder for `.md` files: hidden entries, symlinks and MEMORY.md are skipped. */
async function walkMemoryFiles(root: string): Promise<Array<{ name: string; stats: Stats }>> {
  const found: Array<{ name: string; stats: Stats }> = [];
  const visit = async (folder: string): Promise<void> => {
    let children: string[];
    try {
      children = await readdir(folder);
    } catch {
      return;
    }
    for (const child of children) {
      if (child.startsWith(".") || child === "node_modules") continue;
      const path = join(folder, child);
      const stats = await lstat(path).catch(() => undefined);
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
  const catalogPath = join(storeFolder, "catalog.tsv");
  const searchPath = join(storeFolder, "search.txt");
  const lockPath = join(storeFolder, "store");
  const indexPath = join(root, MEMORY_INDEX_NAME);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_MEMORY_BYTES;
  const defaultAuthor = options.author ?? "unknown";
  const versions = createVersionLog(join(storeFolder, "versions"), tempDir);
  await mkdir(storeFolder, { recursive: true });

  const locked = <T>(task: () => Promise<T>) => withStoreLock(lockPath, task, options.lock);

  async function readCurrent(path: string): Promise<string | undefined> {
    try {
      return await readNoFollow(path);
    } catch (error) {
      if (isMissing(error)) return undefined;
      if ((error as NodeJS.ErrnoException).code === "ELOOP") {
        throw new MemoryPathError(`${path} is a symlink; memory files must be regular files.`, {
          name: path,
          rule: "symlink",
        });
      }
      throw error;
    }
  }

  /** Re-reads the files whose size or time changed since the catalog was written; persists when stale. */
  async function refreshCatalog(): Promise<Map<string, MemoryEntry>> {
    const known = (await readCatalogFile(catalogPath)) ?? new Map<string, MemoryEntry>();
    const fresh = new Map<string, MemoryEntry>();
    let changed = false;
    for (const { name, stats } of await walkMemoryFiles(root)) {
      const previous = known.get(name);
      if (previous && previous.size === stats.size && previous.mtimeMs === stats.mtimeMs) {
        fresh.set(name, previous);
        continue;
      }
      changed = true;
      const content = await readCurrent(join(root, ...name.split("/")));
      if (content !== undefined) fresh.set(name, describeMemory(name, content, stats));
    }
    if (fresh.size !== known.size) changed = true;
    if (!changed) changed = (await lstat(searchPath).catch(() => undefined)) === undefined;
    linkSupersession(fresh);
    if (changed) await persist(fresh);
    return fresh;
  }

  async function persist(entries: Map<string, MemoryEntry>): Promise<void> {
    linkSupersession(entries);
    const sorted = [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
    const catalogText = formatCatalog(sorted);
    await writeFileAtomic(catalogPath, catalogText, tempDir);
    await writeFileAtomic(searchPath, formatSearchIndex(catalogText), tempDir);
    const existing = await readCurrent(indexPath);
    // An empty store gets no index file until its first memory (the memory tool shows it as empty).
    if (existing === undefined && sorted.length === 0) return;
    const next = formatMemoryIndex(memoryIndexPreamble(existing), sorted);
    if (next !== existing) await writeFileAtomic(indexPath, next, tempDir);
  }

  async function loadCatalogLocked(): Promise<Map<string, MemoryEntry>> {
    return (await readCatalogFile(catalogPath)) ?? (await refreshCatalog());
  }

  function checkExpected(
    name: string,
    expected: string | null | undefined,
    current: string | undefined,
  ): void {
    if (expected === undefined) return;
    const actual = current === undefined ? null : hashContent(current);
    if (actual === expected) return;
    const what =
      expected === null
        ? "it was expected not to exist, but it does"
        : actual === null
          ? "it was expected to exist, but it does not"
          : `its hash is ${actual.slice(0, 12)}…, not the expected ${expected.slice(0, 12)}…`;
    throw new MemoryConflictError(
      `${name} changed since it was read (${what}); someone else wrote first. Read it again, merge your change and write with the new hash.`,
      { memoryName: name, expectedHash: expected, actualHash: actual },
    );
  }

  /** Records content that was changed outside the store (an editor) before it is replaced. */
  async function recordExternal(name: string, current: string | undefined): Promise<void> {
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

  async function checkContent(name: string, content: string): Promise<void> {
    if (typeof content !== "string") {
      throw new MemoryLimitError(`The content of ${name} must be a string.`, {
        limit: "type",
        actual: 0,
        maximum: 0,
      });
    }
    const bytes = Buffer.byteLength(content, "utf8");
    if (bytes > maxFileBytes) {
      throw new MemoryLimitError(
        `${name} would be ${bytes} bytes; the limit is ${maxFileBytes}. Split it into several topic files or shorten it.`,
        { limit: "file-bytes", actual: bytes, maximum: maxFileBytes },
      );
    }
    if (name !== MEMORY_INDEX_NAME) parseMemoryFile(content, name);
    if (options.secretScanner) {
      const findings = await options.secretScanner.scan(content);
      if (findings.length > 0) {
        const rules = [...new Set(findings.map((finding) => finding.rule))];
        const where = findings.map((finding) => `line ${finding.line}: ${finding.message}`).join("; ");
        throw new MemorySecretError(
          `${name} was not written: it contains what looks like a secret (${where}; rules ${rules.join(", ")}). Remove the secret (store a reference to where it lives instead) and write again.`,
          { memoryName: name, rules },
        );
      }
    }
  }

  async function removeEmptyFolders(path: string): Promise<void> {
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

  const store: MemoryDir = {
    root,
    storeFolder,
    location: root,

    async read(name) {
      const checked = normalizeMemoryName(name);
      const content = await readCurrent(await resolveMemoryPath(root, checked));
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
      await checkContent(checked, content);
      const path = await resolveMemoryPath(root, checked);
      return locked(async () => {
        await resolveMemoryPath(root, checked);
        const current = await readCurrent(path);
        const entries = await loadCatalogLocked();
        if (checked === MEMORY_INDEX_NAME) {
          checkExpected(checked, writeOptions.expectedHash, current);
          const next = formatMemoryIndex(memoryIndexPreamble(content), entries.values());
          await recordExternal(checked, current);
          await writeFileAtomic(path, next, tempDir);
          await versions.append(versionRecord(checked, "write", next, writeOptions));
          return { hash: hashContent(next) };
        }
        const hash = hashContent(content);
        // The same content again is not a conflict: the store already holds what the caller wants.
        if (current === content) return { hash };
        checkExpected(checked, writeOptions.expectedHash, current);
        await recordExternal(checked, current);
        await writeFileAtomic(path, content, tempDir);
        await versions.append(versionRecord(checked, "write", content, writeOptions));
        const stats = await lstat(path);
        entries.set(checked, describeMemory(checked, content, stats));
        await persist(entries);
        return { hash };
      });
    },

    async delete(name, writeOptions: MemoryWriteOptions = {}) {
      const checked = normalizeMemoryName(name);
      refuseIndex(checked, "deleted");
      const path = await resolveMemoryPath(root, checked);
      await locked(async () => {
        const current = await readCurrent(path);
        if (current === undefined) {
          throw new MemoryNotFoundError(`${checked} does not exist; nothing was deleted.`, {
            memoryName: checked,
          });
        }
        checkExpected(checked, writeOptions.expectedHash, current);
        await recordExternal(checked, current);
        await versions.append({ ...versionRecord(checked, "delete", current, writeOptions), hash: null });
        await rm(path);
        await removeEmptyFolders(path);
        const entries = await loadCatalogLocked();
        entries.delete(checked);
        await persist(entries);
      });
    },

    async rename(from, to, writeOptions: MemoryWriteOptions = {}) {
      const source = normalizeMemoryName(from);
      const target = normalizeMemoryName(to);
      refuseIndex(source, "renamed");
      refuseIndex(target, "overwritten by a rename");
      const sourcePath = await resolveMemoryPath(root, source);
      const targetPath = await resolveMemoryPath(root, target);
      return locked(async () => {
        const current = await readCurrent(sourcePath);
        if (current === undefined) {
          throw new MemoryNotFoundError(`${source} does not exist; nothing was renamed.`, {
            memoryName: source,
          });
        }
        checkExpected(source, writeOptions.expectedHash, current);
        const existing = await readCurrent(targetPath);
        if (existing !== undefined) {
          throw new MemoryConflictError(
            `${target} already exists; rename to another name or delete it first.`,
            { memoryName: target, expectedHash: null, actualHash: hashContent(existing) },
          );
        }
        await recordExternal(source, current);
        await mkdir(dirname(targetPath), { recursive: true });
        await resolveMemoryPath(root, target);
        await renamePath(sourcePath, targetPath);
        await removeEmptyFolders(sourcePath);
        const at = new Date().toISOString();
        const author = writeOptions.author ?? defaultAuthor;
        const reason = writeOptions.reason;
        const common = { at, author, content: current, ...(reason === undefined ? {} : { reason }) };
        await versions.append({
          ...common,
          name: source,
          operation: "rename-from",
          hash: null,
          otherName: target,
        });
        await versions.append({
          ...common,
          name: target,
          operation: "rename-to",
          hash: hashContent(current),
          otherName: source,
        });
        const entries = await loadCatalogLocked();
        entries.delete(source);
        entries.set(target, describeMemory(target, current, await lstat(targetPath)));
        await persist(entries);
        return { hash: hashContent(current) };
      });
    },

    async list() {
      const entries = await locked(refreshCatalog);
      return [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
    },

    async catalog() {
      const entries = (await readCatalogFile(catalogPath)) ?? (await locked(refreshCatalog));
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
      const bytes = await readFile(indexPath).catch(() => undefined);
      if (bytes === undefined) {
        return truncateMemoryIndex(
          formatMemoryIndex(memoryIndexPreamble(undefined), await store.catalog()),
          options.indexLimits,
        );
      }
      return truncateMemoryIndex(bytes, options.indexLimits);
    },

    async versions(name) {
      return versions.list(normalizeMemoryName(name));
    },

    async restore(name, versionId, writeOptions: MemoryWriteOptions = {}) {
      const checked = normalizeMemoryName(name);
      const version = await versions.read(checked, versionId);
      return store.write(checked, version.content, {
        ...writeOptions,
        reason: writeOptions.reason ?? `restore version ${versionId}`,
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

function refuseIndex(name: string, what: string): void {
  if (name === MEMORY_INDEX_NAME) {
    throw new MemoryPathError(`${MEMORY_INDEX_NAME} is the index of the memory dir and cannot be ${what}.`, {
      name,
      rule: "reserved",
    });
  }
}
