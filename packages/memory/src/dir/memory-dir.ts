import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { ConfigurationError } from "@unforget/core";
import {
  type PrefilterOptions,
  prefilterCatalogText,
  prefilterMemories,
  type ScoredMemory,
} from "../retrieve/memory-prefilter.ts";
import { hashContent } from "../store/content-hash.ts";
import { type MemoryEntry, readCatalogFile, readCatalogText } from "../store/memory-catalog.ts";
import { MemoryNotFoundError } from "../store/memory-errors.ts";
import {
  formatMemoryIndex,
  type LoadedMemoryIndex,
  MEMORY_INDEX_NAME,
  type MemoryIndexLimits,
  memoryIndexPreamble,
  truncateMemoryIndex,
} from "../store/memory-index.ts";
import { normalizeMemoryName, resolveMemoryPath } from "../store/memory-name.ts";
import { checkKeep, redactionReason, refuseHeadRedaction, restoreVersion } from "../store/memory-rules.ts";
import type { MemoryContent, MemoryStore } from "../store/memory-store.ts";
import { createVersionLog, type MemoryVersion, type RedactOptions } from "../store/memory-versions.ts";
import { isAbsent, storeFileError } from "../store/store-file-errors.ts";
import type { StoreLockOptions } from "../store/store-lock.ts";
import type { SecretScanner } from "../team/secret-scan.ts";
import { createCatalogFiles } from "./memory-dir-catalog.ts";
import { readMemoryFile } from "./memory-dir-files.ts";
import { deleteMemory, locked, type MemoryDirState, renameMemory, writeMemory } from "./memory-dir-writes.ts";
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
  const state = await openMemoryDirState(options);
  const { root } = state;
  const store: MemoryDir = {
    root,
    storeFolder: join(root, STORE_FOLDER),
    location: root,
    read: (name) => readMemory(state, name),
    write: (name, content, writeOptions = {}) => writeMemory(state, name, content, writeOptions),
    delete: (name, writeOptions = {}) => deleteMemory(state, name, writeOptions),
    rename: (from, to, writeOptions = {}) => renameMemory(state, from, to, writeOptions),
    list: () => listMemories(state),
    catalog: () => readCatalog(state),
    search: (query, searchOptions) => searchMemories(state, query, searchOptions),
    loadIndex: () => loadMemoryIndex(state, options.indexLimits),
    versionedNames: async () => state.versions.names(),
    listVersions: async (name) => state.versions.list(normalizeMemoryName(name)),
    readVersion: async (name, versionId) => state.versions.read(normalizeMemoryName(name), versionId),
    restore: (name, versionId, writeOptions) => restoreVersion(store, name, versionId, writeOptions),
    redactVersion: (name, versionId, redactOptions = {}) =>
      redactVersion(state, name, versionId, redactOptions),
    pruneVersions: (name, pruneOptions) => pruneVersions(state, name, pruneOptions.keep),
  };
  return store;
}

/** Resolves the folder (creating it and its store folder) and gathers what every operation works on. */
async function openMemoryDirState(options: MemoryDirOptions): Promise<MemoryDirState> {
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
  const state: MemoryDirState = {
    root,
    tempDir,
    lockPath: join(storeFolder, "store"),
    indexPath: join(root, MEMORY_INDEX_NAME),
    catalogFiles: createCatalogFiles(root, storeFolder, tempDir),
    versions: createVersionLog(storeFolder, tempDir),
    limits: {
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_MEMORY_BYTES,
      secretScanner: options.secretScanner,
    },
    defaultAuthor: options.author ?? "unknown",
    lock: options.lock,
  };
  await mkdir(storeFolder, { recursive: true });
  return state;
}

/** `MemoryStore.read`: the content and its hash, or `MemoryNotFoundError`. */
async function readMemory(state: MemoryDirState, name: string): Promise<MemoryContent> {
  const checked = normalizeMemoryName(name);
  const content = await readMemoryFile(await resolveMemoryPath(state.root, checked));
  if (content === undefined) {
    throw new MemoryNotFoundError(
      `${checked} does not exist in ${state.root}; list the memories to see what does.`,
      {
        memoryName: checked,
      },
    );
  }
  return { content, hash: hashContent(content) } satisfies MemoryContent;
}

/** `MemoryStore.list`: the catalog refreshed from the files under the lock, by name. */
async function listMemories(state: MemoryDirState): Promise<MemoryEntry[]> {
  const entries = await locked(state, state.catalogFiles.refresh);
  return [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** `MemoryStore.catalog`: the catalog as written, without the lock; refreshed only when there is none. */
async function readCatalog(state: MemoryDirState): Promise<MemoryEntry[]> {
  const entries =
    (await readCatalogFile(state.catalogFiles.catalogPath)) ??
    (await locked(state, state.catalogFiles.refresh));
  return [...entries.values()];
}

/** `MemoryStore.search`: BM25 over the written catalog and search file, or over a fresh listing. */
async function searchMemories(
  state: MemoryDirState,
  query: string,
  searchOptions: PrefilterOptions | undefined,
): Promise<ScoredMemory[]> {
  const [catalog, search] = await Promise.all([
    readCatalogText(state.catalogFiles.catalogPath),
    readFile(state.catalogFiles.searchPath, "utf8").catch(() => ""),
  ]);
  const fast =
    catalog === undefined ? undefined : prefilterCatalogText({ catalog, search }, query, searchOptions);
  if (fast) return fast;
  // Missing, stale, or replaced between the two reads by a writer: rebuild, and rank over the parsed catalog.
  return prefilterMemories(await listMemories(state), query, searchOptions);
}

/** `MemoryStore.loadIndex`: MEMORY.md within its limits, or one built from the catalog when there is none. */
async function loadMemoryIndex(
  state: MemoryDirState,
  indexLimits: MemoryIndexLimits | undefined,
): Promise<LoadedMemoryIndex> {
  const bytes = await readFile(state.indexPath).catch((error: unknown) => {
    // No MEMORY.md yet: the index is built from the catalog. An unreadable one is an error, never replaced.
    if (isAbsent(error)) return undefined;
    throw storeFileError("The memory index", state.indexPath, error);
  });
  if (bytes === undefined) {
    return truncateMemoryIndex(
      formatMemoryIndex(memoryIndexPreamble(undefined), await readCatalog(state)),
      indexLimits,
    );
  }
  return truncateMemoryIndex(bytes, indexLimits);
}

/** `MemoryStore.redactVersion`: empties a kept version's content (never the current one's), once. */
async function redactVersion(
  state: MemoryDirState,
  name: string,
  versionId: string,
  redactOptions: RedactOptions,
): Promise<MemoryVersion> {
  const checked = normalizeMemoryName(name);
  return locked(state, async () => {
    const version = await state.versions.read(checked, versionId);
    const current = await readMemoryFile(await resolveMemoryPath(state.root, checked));
    refuseHeadRedaction(version, current === undefined ? null : hashContent(current));
    if (version.redactedAt !== undefined) return version;
    const redacted: MemoryVersion = {
      ...version,
      content: "",
      redactedAt: new Date().toISOString(),
      reason: redactionReason(redactOptions, state.defaultAuthor),
    };
    await state.versions.replace(redacted);
    return redacted;
  });
}

/** `MemoryStore.pruneVersions`: keeps the newest `keep` versions and the one the memory holds now. */
async function pruneVersions(
  state: MemoryDirState,
  name: string,
  keepOption: number,
): Promise<{ removed: number }> {
  const checked = normalizeMemoryName(name);
  const keep = checkKeep(keepOption);
  return locked(state, async () => {
    const all = await state.versions.list(checked);
    const current = await readMemoryFile(await resolveMemoryPath(state.root, checked));
    const head = current === undefined ? undefined : hashContent(current);
    const headId = all.find((version) => head !== undefined && version.hash === head)?.id;
    const removed = all
      .slice(keep)
      .filter((version) => version.id !== headId)
      .map((version) => version.id);
    await state.versions.remove(checked, removed);
    return { removed: removed.length };
  });
}
