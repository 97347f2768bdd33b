import type { PrefilterOptions, ScoredMemory } from "../retrieve/memory-prefilter.ts";
import type { MemoryEntry } from "./memory-catalog.ts";
import type { LoadedMemoryIndex } from "./memory-index.ts";
import type { MemoryVersions } from "./memory-versions.ts";

/** A memory as `read` returns it: the whole file (frontmatter included) and its content hash. */
export interface MemoryContent {
  content: string;
  /** SHA-256 of `content`; pass it as `expectedHash` to write back without losing someone else's update. */
  hash: string;
  /** The memory's version number, on stores that number versions (it grows by one with every change). */
  version?: number;
}

/** What a write resolves to. */
export interface MemoryWriteResult {
  /** SHA-256 of what the memory now holds. */
  hash: string;
  /** What the write went ahead without (a secret scan that ran only in part), one sentence each; absent when nothing. */
  warnings?: string[];
}

/** Conditions and attribution of a change. */
export interface MemoryWriteOptions {
  /**
   * Compare-and-swap: the hash the caller read. The change is refused with `MemoryConflictError` when the
   * memory's current hash differs — even when the new content equals the current one, since the caller
   * computed it from a state that is gone; `null` means "only if it does not exist yet". Omitted:
   * unconditional. A malformed hash is a `MemoryArgumentError`.
   */
  expectedHash?: string | null;
  /**
   * The caller's id for this logical change (a UUID). A retry with the same id (after a timeout, a lost
   * reply) resolves to what the first call resolved to and makes no second version; an id reused for a
   * different change is a `MemoryArgumentError`.
   */
  writeId?: string;
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
export interface MemoryStore extends MemoryVersions {
  /** A label for messages and reports (the folder path, or the server's URL without credentials). */
  readonly location: string;
  /** Resolves to the memory's content and hash; rejects with `MemoryNotFoundError` when it does not exist. */
  read(name: string): Promise<MemoryContent>;
  /**
   * Creates or replaces a memory atomically, keeps the new state as a version and keeps MEMORY.md in
   * step. Content equal to the current one (with a matching or no `expectedHash`) succeeds with no new
   * version. Rejects (writing nothing) with `MemoryPathError`, `MemoryArgumentError`, `MemoryLimitError`,
   * `MemoryFrontmatterError`, `MemorySecretError` (team memory) or `MemoryConflictError` when
   * `expectedHash` does not match.
   */
  write(name: string, content: string, options?: MemoryWriteOptions): Promise<MemoryWriteResult>;
  /** Deletes a memory; its last content stays as a version (a tombstone, restorable). CAS like `write`. */
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
  /** Writes a kept version's content back (itself a new version). CAS like `write`. */
  restore(name: string, versionId: string, options?: MemoryWriteOptions): Promise<{ hash: string }>;
}
