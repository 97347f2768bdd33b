import type { MemoryEntry } from "./memory-catalog.ts";
import type { LoadedMemoryIndex } from "./memory-index.ts";
import type { PrefilterOptions, ScoredMemory } from "./memory-prefilter.ts";
import type { MemoryVersion } from "./memory-versions.ts";

/** A memory as `read` returns it: the whole file (frontmatter included) and its content hash. */
export interface MemoryContent {
  content: string;
  /** SHA-256 of `content`; pass it as `expectedHash` to write back without losing someone else's update. */
  hash: string;
}

/** Conditions and attribution of a change. */
export interface MemoryWriteOptions {
  /**
   * Compare-and-swap: the hash the caller read. The change is refused with `MemoryConflictError` when the
   * memory's current hash differs; `null` means "only if it does not exist yet". Omitted: unconditional.
   */
  expectedHash?: string | null;
  /** Who makes the change ("session:<id>", "agent:<name>", "user", "dream"); recorded with the version. */
  author?: string;
  /** Why, recorded with the version. */
  reason?: string;
}

/**
 * Where memories live. The memory dir implements it on a local folder; a networked store (a database
 * server) implements the same members with the same guarantees, so callers never change. Names are
 * relative paths ending in `.md`; every implementation passes `describeMemoryStoreContract`
 * from `@unforget/memory/testing`.
 */
export interface MemoryStore {
  /** A label for messages and reports (the folder path, or the server's URL without credentials). */
  readonly location: string;
  /** Resolves to the memory's content and hash; rejects with `MemoryNotFoundError` when it does not exist. */
  read(name: string): Promise<MemoryContent>;
  /**
   * Creates or replaces a memory atomically, keeps the previous state as a version and keeps MEMORY.md in
   * step. Rejects (writing nothing) with `MemoryPathError`, `MemoryLimitError`, `MemoryFrontmatterError`,
   * `MemorySecretError` (team memory) or `MemoryConflictError` when `expectedHash` does not match.
   */
  write(name: string, content: string, options?: MemoryWriteOptions): Promise<{ hash: string }>;
  /** Deletes a memory; its last content stays as a version (restorable). CAS like `write`. */
  delete(name: string, options?: MemoryWriteOptions): Promise<void>;
  /** Renames a memory; refuses with `MemoryConflictError` when `to` exists. CAS on `from` like `write`. */
  rename(from: string, to: string, options?: MemoryWriteOptions): Promise<{ hash: string }>;
  /** Every memory (MEMORY.md and hidden store files excluded), checked against what is on disk, by name. */
  list(): Promise<MemoryEntry[]>;
  /** The catalog as last written, without touching every file: the fast path for retrieval. */
  catalog(): Promise<MemoryEntry[]>;
  /**
   * The BM25 pre-filter over the catalog, decay as a ranking feature, superseded memories left out: the fast
   * path of retrieval. A store without its own index returns `prefilterMemories(await catalog(), …)`.
   */
  search(query: string, options?: PrefilterOptions): Promise<ScoredMemory[]>;
  /** MEMORY.md cut to its loading limits, with a warning when it was cut. */
  loadIndex(): Promise<LoadedMemoryIndex>;
  /** Every kept version of `name` (also of a deleted memory), newest first. */
  versions(name: string): Promise<MemoryVersion[]>;
  /** Writes a kept version's content back (itself a new version). CAS like `write`. */
  restore(name: string, versionId: string, options?: MemoryWriteOptions): Promise<{ hash: string }>;
}
