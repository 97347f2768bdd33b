import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { MemoryNotFoundError } from "./memory-errors.ts";

/** What happened in one version of a memory. */
export type MemoryVersionOperation = "write" | "delete" | "rename-from" | "rename-to" | "external";

/** One kept version: the content a memory had after an operation, who made it, and when. */
export interface MemoryVersion {
  /** Stable id, sortable by time. */
  id: string;
  name: string;
  operation: MemoryVersionOperation;
  /** ISO-8601 time of the operation. */
  at: string;
  /** Who made the change ("session:<id>", "agent:<name>", "user", "dream", …). */
  author: string;
  /** Hash of `content` (`null` for a delete: the memory was gone after it). */
  hash: string | null;
  /** The content after the operation; for a delete, the content that was deleted. */
  content: string;
  /** The other name of a rename. */
  otherName?: string;
  /** Why, when the writer said. */
  reason?: string;
}

let sequence = 0;

function versionId(at: string): string {
  sequence = (sequence + 1) % 1_000_000;
  const stamp = at.replace(/[-:.TZ]/g, "");
  return `${stamp}-${process.pid}-${String(sequence).padStart(6, "0")}`;
}

/**
 * Keeps every version of every memory under `<store>/.unforget/versions/<name>/`, a hidden folder that
 * listing and the memory tool never show. Versions are append-only files written atomically.
 */
export function createVersionLog(versionsDir: string, tempDir: string) {
  const folder = (name: string) => join(versionsDir, ...name.split("/"));
  return {
    /** Appends one version and returns it. */
    async append(record: Omit<MemoryVersion, "id">): Promise<MemoryVersion> {
      const version: MemoryVersion = { id: versionId(record.at), ...record };
      await writeFileAtomic(join(folder(record.name), `${version.id}.json`), JSON.stringify(version), {
        tempDir,
      });
      return version;
    },
    /** Every version of `name`, newest first; empty when it never had one. */
    async list(name: string): Promise<MemoryVersion[]> {
      let files: string[];
      try {
        files = (await readdir(folder(name))).filter((file) => file.endsWith(".json"));
      } catch {
        return [];
      }
      files.sort().reverse();
      const versions: MemoryVersion[] = [];
      for (const file of files) {
        versions.push(JSON.parse(await readFile(join(folder(name), file), "utf8")) as MemoryVersion);
      }
      return versions;
    },
    /** The newest version of `name`, if any, without reading the others. */
    async latest(name: string): Promise<MemoryVersion | undefined> {
      let files: string[];
      try {
        files = (await readdir(folder(name))).filter((file) => file.endsWith(".json"));
      } catch {
        return undefined;
      }
      const newest = files.sort().at(-1);
      return newest === undefined
        ? undefined
        : (JSON.parse(await readFile(join(folder(name), newest), "utf8")) as MemoryVersion);
    },
    /** One version by id; throws `MemoryNotFoundError` when there is none. */
    async read(name: string, id: string): Promise<MemoryVersion> {
      if (!/^[0-9]+-[0-9]+-[0-9]+$/.test(id)) {
        throw new MemoryNotFoundError(`${name} has no version "${id}"; list them with versions(name).`, {
          memoryName: name,
        });
      }
      try {
        return JSON.parse(await readFile(join(folder(name), `${id}.json`), "utf8")) as MemoryVersion;
      } catch (error) {
        throw new MemoryNotFoundError(`${name} has no version "${id}"; list them with versions(name).`, {
          memoryName: name,
          cause: error,
        });
      }
    },
  };
}

export type VersionLog = ReturnType<typeof createVersionLog>;
