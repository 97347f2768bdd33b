import { hashContent, MemoryNotFoundError, type MemoryStore, type MemoryVersion } from "@unforget/memory";

/** What an import did. */
export interface MemoryImportReport {
  /** Versions replayed (writes, deletes and renames, in the order they happened). */
  versions: number;
  /** Versions already imported by an earlier run (skipped). */
  skipped: number;
  /** Memories whose current content had no version (written by hand) and was copied as it is. */
  untracked: string[];
  /** Memories in the target now. */
  memories: number;
}

/**
 * Copies a store with its history into another (a memory dir into PostgreSQL): every kept version of every
 * memory, deleted ones too, replayed in the order they happened with their authors, then any content written
 * by hand. Each replayed version carries a write id derived from its source id, so running it again (after an
 * interruption) copies only what is missing.
 */
export async function importMemoryHistory(
  source: MemoryStore,
  target: MemoryStore,
  options: { names?: readonly string[]; label?: string } = {},
): Promise<MemoryImportReport> {
  const label = options.label ?? source.location;
  const names = new Set(options.names ?? (await source.versionedNames()));
  const all: MemoryVersion[] = [];
  for (const name of names) all.push(...(await source.listVersions(name)));
  // Oldest first; the source's ids sort by time within a process, and `at` orders across processes.
  all.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  const report: MemoryImportReport = { versions: 0, skipped: 0, untracked: [], memories: 0 };
  const seen = new Set<string>();
  for (const version of all) {
    const key = `${version.name}\u0000${version.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const writeId = `import:${hashContent(`${label}\u0000${version.name}\u0000${version.id}`)}`;
    const reason = `imported from ${label} (${version.operation} at ${version.at}${version.reason ? `: ${version.reason}` : ""})`;
    const common = { author: version.author, reason, writeId };
    try {
      if (version.operation === "write" || version.operation === "external") {
        if (version.redactedAt !== undefined) continue;
        await target.write(version.name, version.content, common);
      } else if (version.operation === "delete") {
        await target.delete(version.name, common);
      } else if (version.operation === "rename-to" && version.otherName !== undefined) {
        await target.rename(version.otherName, version.name, common);
      } else continue;
      report.versions++;
    } catch (error) {
      // A delete or rename of something the target never had (its earlier versions were pruned): skip it.
      if (!(error instanceof MemoryNotFoundError)) throw error;
      report.skipped++;
    }
  }
  for (const entry of await source.list()) {
    const { content } = await source.read(entry.name);
    const current = await target.read(entry.name).catch(() => undefined);
    if (current?.content === content) continue;
    await target.write(entry.name, content, {
      author: "import",
      reason: `copied from ${label}: it had no version`,
    });
    report.untracked.push(entry.name);
  }
  report.memories = (await target.list()).length;
  return report;
}
