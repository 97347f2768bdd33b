import { createHash } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { MemoryNotFoundError } from "./memory-errors.ts";
import { isAbsent, storeFileError } from "./store-file-errors.ts";

/** What happened in one version of a memory. */
export type MemoryVersionOperation = "write" | "delete" | "rename-from" | "rename-to" | "external";

/** One kept version: the content a memory had after an operation, who made it, and when. */
export interface MemoryVersion {
  /** Stable id, unique in the store. */
  id: string;
  name: string;
  operation: MemoryVersionOperation;
  /** ISO-8601 time of the operation. */
  at: string;
  /** Who made the change ("session:<id>", "agent:<name>", "user", "dream", …). */
  author: string;
  /** Hash of `content` (`null` for a delete: the memory was gone after it). */
  hash: string | null;
  /** The content after the operation; for a delete, the content that was deleted; "" once redacted. */
  content: string;
  /** The other name of a rename. */
  otherName?: string;
  /** Why, when the writer said. */
  reason?: string;
  /** The memory's version number after this operation, on stores that number versions. */
  version?: number;
  /** The identity the store was opened with (user or service, agent, machine), on stores that record it. */
  actor?: string;
  /** The caller's id for the logical change; a retry with the same id returns this version's result. */
  writeId?: string;
  /** When the content was redacted (the version itself is kept). */
  redactedAt?: string;
}

/** How a redaction is attributed. */
export interface RedactOptions {
  /** Who redacted it; recorded with the version. */
  author?: string;
  /** Why (kept with the version in place of the content). */
  reason?: string;
}

/**
 * The kept versions of a store's memories, also of deleted ones. Every `MemoryStore` has them; a backend
 * keeps them where it keeps its memories (a hidden folder, a table).
 */
export interface MemoryVersions {
  /** Every name that has kept versions, deleted memories included, sorted: what a copy or backup walks. */
  versionedNames(): Promise<string[]>;
  /** Every kept version of `name` (also of a deleted memory), newest first; empty when it never had one. */
  listVersions(name: string): Promise<MemoryVersion[]>;
  /** One version by id; rejects with `MemoryNotFoundError` when `name` has no such version. */
  readVersion(name: string, versionId: string): Promise<MemoryVersion>;
  /**
   * Blanks one version's content (a secret written by mistake, personal data to erase) and keeps the version
   * with its author, time and `redactedAt`. A version whose content is the memory's current content cannot be
   * redacted: overwrite or delete the memory first. Rejects with `MemoryNotFoundError` for an unknown version.
   */
  redactVersion(name: string, versionId: string, options?: RedactOptions): Promise<MemoryVersion>;
  /**
   * Removes all but the newest `keep` versions of `name` (at least 1), and never the version that holds the
   * memory's current content. Resolves to how many were removed.
   */
  pruneVersions(name: string, options: { keep: number }): Promise<{ removed: number }>;
}

let sequence = 0;

/** A version id that sorts by time within one process and is unique across processes: `<stamp>-<pid>-<n>`. */
export function createVersionId(at: string): string {
  sequence = (sequence + 1) % 1_000_000;
  const stamp = at.replace(/[-:.TZ]/g, "");
  return `${stamp}-${process.pid}-${String(sequence).padStart(6, "0")}`;
}

const VERSION_ID = /^[0-9]+-[0-9]+-[0-9]+$/;

/** What a write with a `writeId` resolved to, remembered so that a retry gets the same answer. */
export interface RememberedWrite {
  writeId: string;
  name: string;
  operation: MemoryVersionOperation;
  /** The hash the call resolved to (`null` for a delete). */
  hash: string | null;
}

/** Every memory name under the versions folder whose folder holds version files, sorted. */
async function namesWithVersions(versionsDir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (folder: string, prefix: string): Promise<void> => {
    const children = await readdir(folder, { withFileTypes: true }).catch((error: unknown) => {
      if (isAbsent(error)) return [];
      throw storeFileError("The versions folder", folder, error);
    });
    if (children.some((child) => child.isFile() && child.name.endsWith(".json"))) found.push(prefix);
    for (const child of children) {
      if (child.isDirectory())
        await visit(join(folder, child.name), prefix === "" ? child.name : `${prefix}/${child.name}`);
    }
  };
  await visit(versionsDir, "");
  return found.filter((name) => name !== "").sort();
}

/**
 * Keeps every version of every memory under `<store>/.unforget/versions/<name>/`, a hidden folder that
 * listing and the memory tool never show, and the outcome of every write that carried a `writeId` under
 * `<store>/.unforget/write-ids/`. Versions are files written atomically. Call the writing members under the
 * store lock.
 */
export function createVersionLog(storeFolder: string, tempDir: string) {
  const versionsDir = join(storeFolder, "versions");
  const writeIdsDir = join(storeFolder, "write-ids");
  const folder = (name: string) => join(versionsDir, ...name.split("/"));
  const fileOf = (name: string, id: string) => join(folder(name), `${id}.json`);
  const writeIdFile = (writeId: string) =>
    join(writeIdsDir, `${createHash("sha256").update(writeId, "utf8").digest("hex")}.json`);

  // Only a missing folder or file is "no version": anything else (a file where the folder belongs, a folder
  // where a record belongs, a symlink loop, a record that does not parse) is a MemoryStoreError, so a write
  // never goes ahead on a history it could not read.
  const ids = async (name: string): Promise<string[]> => {
    try {
      return (await readdir(folder(name)))
        .filter((file) => file.endsWith(".json"))
        .map((file) => file.slice(0, -5))
        .sort();
    } catch (error) {
      if (isAbsent(error)) return [];
      throw storeFileError(`The version folder of ${name}`, folder(name), error);
    }
  };
  /** One version record; a missing one rejects with the raw ENOENT error (the callers decide what that means). */
  const load = async (name: string, id: string): Promise<MemoryVersion> => {
    const file = fileOf(name, id);
    try {
      return JSON.parse(await readFile(file, "utf8")) as MemoryVersion;
    } catch (error) {
      if (isAbsent(error)) throw error;
      throw storeFileError(`The version record of ${name}`, file, error);
    }
  };
  const notFound = (name: string, id: string, cause?: unknown) =>
    new MemoryNotFoundError(`${name} has no version "${id}"; list them with listVersions(name).`, {
      memoryName: name,
      cause,
    });

  return {
    /** Appends one version and returns it (and remembers its `writeId`, if it has one). */
    async append(record: Omit<MemoryVersion, "id">): Promise<MemoryVersion> {
      const version: MemoryVersion = { id: createVersionId(record.at), ...record };
      await writeFileAtomic(fileOf(record.name, version.id), JSON.stringify(version), { tempDir });
      return version;
    },
    /** Every name with at least one version (its folder holds version files), sorted. */
    async names(): Promise<string[]> {
      return namesWithVersions(versionsDir);
    },
    /** Every version of `name`, newest first; empty when it never had one. */
    async list(name: string): Promise<MemoryVersion[]> {
      const all = (await ids(name)).reverse();
      return Promise.all(all.map((id) => load(name, id)));
    },
    /** The newest version of `name`, if any, without reading the others. */
    async latest(name: string): Promise<MemoryVersion | undefined> {
      const newest = (await ids(name)).at(-1);
      return newest === undefined ? undefined : load(name, newest);
    },
    /** One version by id; throws `MemoryNotFoundError` when there is none. */
    async read(name: string, id: string): Promise<MemoryVersion> {
      if (!VERSION_ID.test(id)) throw notFound(name, id);
      try {
        return await load(name, id);
      } catch (error) {
        if (isAbsent(error)) throw notFound(name, id, error);
        throw error;
      }
    },
    /** Rewrites one version in place (a redaction). */
    async replace(version: MemoryVersion): Promise<void> {
      await writeFileAtomic(fileOf(version.name, version.id), JSON.stringify(version), { tempDir });
    },
    /** Removes versions of `name` by id. */
    async remove(name: string, removed: readonly string[]): Promise<void> {
      for (const id of removed) await rm(fileOf(name, id), { force: true });
    },
    /** What an earlier write with this `writeId` resolved to, if there was one. */
    async recall(writeId: string): Promise<RememberedWrite | undefined> {
      const file = writeIdFile(writeId);
      try {
        return JSON.parse(await readFile(file, "utf8")) as RememberedWrite;
      } catch (error) {
        // Unreadable is not "never written": answering undefined would let the same change be written twice.
        if (isAbsent(error)) return undefined;
        throw storeFileError(`The record of write id ${JSON.stringify(writeId)}`, file, error);
      }
    },
    /** Remembers what a write with a `writeId` resolved to. */
    async remember(outcome: RememberedWrite): Promise<void> {
      await writeFileAtomic(writeIdFile(outcome.writeId), JSON.stringify(outcome), { tempDir });
    },
  };
}

export type VersionLog = ReturnType<typeof createVersionLog>;
