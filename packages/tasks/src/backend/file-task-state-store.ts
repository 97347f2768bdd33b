import { randomUUID } from "node:crypto";
import { link, mkdir, open, readdir, readFile, rm, truncate } from "node:fs/promises";
import { join } from "node:path";
import { describeError, TaskNotFoundError, TaskStateError, TaskStoreError } from "../task/task-errors.ts";
import { assertTaskId } from "../task/task-id.ts";
import { taskDirectory } from "../task/task-paths.ts";
import type { TaskRecord, TaskRecordInit } from "../task/task-record.ts";
import type { TaskStateStore } from "./task-state-store.ts";

export interface FileTaskStateStoreOptions {
  /** The manager's directory: each task's state lives in `<dir>/<id>/`. */
  dir: string;
}

const VERSION_FILE = /^state\.(\d+)\.json$/;
const versionFile = (version: number) => `state.${version}.json`;
const READ_ATTEMPTS = 8;

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

function latestVersion(names: readonly string[]): number {
  let latest = 0;
  for (const name of names) {
    const match = VERSION_FILE.exec(name);
    if (match) latest = Math.max(latest, Number(match[1]));
  }
  return latest;
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function parseRecord(text: string, version: number, location: string): TaskRecord {
  const value = JSON.parse(text) as Partial<TaskRecord>;
  if (
    typeof value !== "object" ||
    value === null ||
    typeof value.id !== "string" ||
    typeof value.type !== "string"
  ) {
    throw new TaskStoreError(
      `The task state file ${location} does not hold a task record; move it away (the task is then ignored) or restore it from a backup.`,
      { location },
    );
  }
  return { ...(value as TaskRecord), pending: value.pending ?? [], version };
}

/** The newest readable version of a task's record, or undefined when the task has no state folder. */
async function readLatest(dir: string, id: string): Promise<TaskRecord | undefined> {
  const folder = taskDirectory(dir, id);
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (error) {
      if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return undefined;
      throw new TaskStoreError(`Could not list ${folder} (${describeError(error)}).`, {
        location: folder,
        cause: error,
      });
    }
    const version = latestVersion(names);
    if (version === 0) return undefined;
    const location = join(folder, versionFile(version));
    let text: string;
    try {
      text = await readFile(location, "utf8");
    } catch (error) {
      if (isErrno(error, "ENOENT")) continue;
      throw new TaskStoreError(`Could not read ${location} (${describeError(error)}).`, {
        location,
        cause: error,
      });
    }
    // Empty: superseded and truncated between the listing and the read. Look again.
    if (text.length === 0) continue;
    try {
      return parseRecord(text, version, location);
    } catch (error) {
      if (latestVersion(await readdir(folder).catch(() => [])) > version) continue;
      if (error instanceof TaskStoreError) throw error;
      throw new TaskStoreError(
        `The task state file ${location} is not valid JSON (${describeError(error)}); move it away or restore it.`,
        { location, cause: error },
      );
    }
  }
  throw new TaskStoreError(
    `The state of task "${id}" changed ${READ_ATTEMPTS} times while it was being read; retry.`,
    { location: folder },
  );
}

/** Writes `version` if its name is free; false when another writer took it first. */
async function writeVersion(
  dir: string,
  id: string,
  version: number,
  record: TaskRecordInit,
): Promise<boolean> {
  const folder = taskDirectory(dir, id);
  const temporary = join(folder, `.state.${randomUUID()}.tmp`);
  const target = join(folder, versionFile(version));
  try {
    const handle = await open(temporary, "wx");
    try {
      await handle.writeFile(`${JSON.stringify({ ...record, version })}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, target);
    } catch (error) {
      if (isErrno(error, "EEXIST")) return false;
      throw error;
    }
    await syncDirectory(folder);
  } catch (error) {
    throw new TaskStoreError(`Could not write ${target} (${describeError(error)}).`, {
      location: target,
      cause: error,
    });
  } finally {
    await rm(temporary, { force: true });
  }
  if (version > 1) await truncate(join(folder, versionFile(version - 1)), 0).catch(() => undefined);
  return true;
}

async function createRecord(dir: string, record: TaskRecordInit): Promise<TaskRecord> {
  assertTaskId(record.id);
  await mkdir(taskDirectory(dir, record.id), { recursive: true });
  if (!(await writeVersion(dir, record.id, 1, record))) {
    throw new TaskStateError(`A task with id "${record.id}" already exists in ${dir}; choose another id.`, {
      taskId: record.id,
    });
  }
  return { ...record, version: 1 };
}

/** Every task folder's latest record, oldest first (ties by id). */
async function listRecords(dir: string): Promise<TaskRecord[]> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw new TaskStoreError(`Could not list ${dir} (${describeError(error)}).`, {
      location: dir,
      cause: error,
    });
  }
  const records: TaskRecord[] = [];
  // Bounded concurrency: a directory with thousands of tasks must not exhaust file descriptors.
  for (let start = 0; start < entries.length; start += 32) {
    const batch = await Promise.all(entries.slice(start, start + 32).map((name) => readLatest(dir, name)));
    for (const record of batch) if (record !== undefined) records.push(record);
  }
  return records.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The compare-and-swap: writes the next version when `expectedVersion` is still the latest. */
async function updateRecord(
  dir: string,
  id: string,
  expectedVersion: number,
  next: TaskRecordInit,
): Promise<TaskRecord | undefined> {
  assertTaskId(id);
  const current = await readLatest(dir, id);
  if (current === undefined) {
    throw new TaskNotFoundError(`No task "${id}" in ${dir}; it cannot be updated. Call list() for the ids.`, {
      taskId: id,
    });
  }
  if (current.version !== expectedVersion) return undefined;
  const record = { ...next, id };
  return (await writeVersion(dir, id, expectedVersion + 1, record))
    ? { ...record, version: expectedVersion + 1 }
    : undefined;
}

/**
 * One folder per task, one file per version: `state.<N>.json`. An update writes a temporary file, fsyncs it
 * and hard-links it to the next version's name; `link` fails when that name exists, which makes the update a
 * compare-and-swap between processes without any lock to go stale. The superseded version is truncated, not
 * deleted, so its name stays taken and a slow writer can never reuse it.
 */
export function createFileTaskStateStore(options: FileTaskStateStoreOptions): TaskStateStore {
  const { dir } = options;
  return {
    create: (record) => createRecord(dir, record),
    get: async (id) => {
      assertTaskId(id);
      return readLatest(dir, id);
    },
    list: () => listRecords(dir),
    update: (id, expectedVersion, next) => updateRecord(dir, id, expectedVersion, next),
  };
}
