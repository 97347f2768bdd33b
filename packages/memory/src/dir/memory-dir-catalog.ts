import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import {
  describeMemory,
  formatCatalog,
  formatSearchIndex,
  linkSupersession,
  type MemoryEntry,
  readCatalogFile,
} from "../store/memory-catalog.ts";
import { formatMemoryIndex, MEMORY_INDEX_NAME, memoryIndexPreamble } from "../store/memory-index.ts";
import { readMemoryFile, walkMemoryFiles } from "./memory-dir-files.ts";

/** The derived files of a memory dir: the catalog, the search file and the generated part of MEMORY.md. */
export interface CatalogFiles {
  readonly catalogPath: string;
  readonly searchPath: string;
  /** The catalog as written, or a fresh scan when there is none. Call under the store lock. */
  load(): Promise<Map<string, MemoryEntry>>;
  /** Re-reads the files whose size or time changed since the catalog was written; rewrites it when stale. */
  refresh(): Promise<Map<string, MemoryEntry>>;
  /** Writes the catalog, the search file and MEMORY.md for these entries. Call under the store lock. */
  persist(entries: Map<string, MemoryEntry>): Promise<void>;
}

/** A file's size and change time, as `describeMemory` takes them. */
export function fileStamp(stats: { size: number; mtimeMs: number }): { size: number; changedAtMs: number } {
  return { size: stats.size, changedAtMs: stats.mtimeMs };
}

export function createCatalogFiles(root: string, storeFolder: string, tempDir: string): CatalogFiles {
  const catalogPath = join(storeFolder, "catalog.tsv");
  const searchPath = join(storeFolder, "search.txt");
  const indexPath = join(root, MEMORY_INDEX_NAME);

  const persist = async (entries: Map<string, MemoryEntry>): Promise<void> => {
    linkSupersession(entries);
    const sorted = [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
    const catalogText = formatCatalog(sorted);
    await writeFileAtomic(catalogPath, catalogText, { tempDir });
    await writeFileAtomic(searchPath, formatSearchIndex(catalogText), { tempDir });
    const existing = await readMemoryFile(indexPath);
    // An empty store gets no index file until its first memory (the memory tool shows it as empty).
    if (existing === undefined && sorted.length === 0) return;
    const next = formatMemoryIndex(memoryIndexPreamble(existing), sorted);
    if (next !== existing) await writeFileAtomic(indexPath, next, { tempDir });
  };

  const refresh = async (): Promise<Map<string, MemoryEntry>> => {
    const known = (await readCatalogFile(catalogPath)) ?? new Map<string, MemoryEntry>();
    const fresh = new Map<string, MemoryEntry>();
    let changed = false;
    for (const { name, stats } of await walkMemoryFiles(root)) {
      const previous = known.get(name);
      if (previous && previous.size === stats.size && previous.changedAtMs === stats.mtimeMs) {
        fresh.set(name, previous);
        continue;
      }
      changed = true;
      const content = await readMemoryFile(join(root, ...name.split("/")));
      if (content !== undefined) fresh.set(name, describeMemory(name, content, fileStamp(stats)));
    }
    if (fresh.size !== known.size) changed = true;
    if (!changed) changed = (await lstat(searchPath).catch(() => undefined)) === undefined;
    linkSupersession(fresh);
    if (changed) await persist(fresh);
    return fresh;
  };

  return {
    catalogPath,
    searchPath,
    persist,
    refresh,
    load: async () => (await readCatalogFile(catalogPath)) ?? (await refresh()),
  };
}
