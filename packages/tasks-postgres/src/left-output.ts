import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { SqlClient } from "@unforget/postgres";
import { groupExists } from "@unforget/process";
import { CHUNK_BYTES, SHIPPING_NOTE } from "./postgres-task-output-store.ts";

/** Where a worker keeps the folders of attempts that were lost in its folder, until they are shipped. */
const LEFT = ".left-output";

interface Note {
  taskId: string;
  attempt: number;
}

async function readNote(folder: string): Promise<Note | undefined> {
  try {
    const note = JSON.parse(await readFile(join(folder, SHIPPING_NOTE), "utf8")) as Partial<Note>;
    return typeof note.taskId === "string" && Number.isSafeInteger(note.attempt)
      ? { taskId: note.taskId, attempt: note.attempt as number }
      : undefined;
  } catch {
    return undefined;
  }
}

async function moveAside(dir: string, entry: string, note: Note): Promise<void> {
  await mkdir(join(dir, LEFT), { recursive: true });
  // Another worker on the same folder may have moved it first.
  await rename(join(dir, entry), join(dir, LEFT, `${entry}.${note.attempt}`)).catch(() => undefined);
}

/**
 * Moves aside, from a worker's folder `dir`, the task folders of attempts that are over: what a worker that
 * ran there before left (it was killed, or closed while its tasks ran), which `shipLeftOutput` then ships.
 * Folders of running attempts stay (another worker on the same folder runs them, or the lease of a killed one
 * has not lapsed yet): resolves to how many of those are not `ownerId`'s, to look at again later.
 */
export async function setAsideLeftOutput(client: SqlClient, dir: string, ownerId: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return 0;
  }
  let running = 0;
  for (const entry of entries) {
    if (entry === LEFT) continue;
    const note = await readNote(join(dir, entry));
    if (note === undefined) continue;
    const { rows } = await client.query<{ running: boolean; worker_id: string | null }>(
      "SELECT attempt = $2 AND status = 'running' AS running, worker_id FROM unforget_task WHERE id = $1",
      [note.taskId, note.attempt],
    );
    const row = rows[0];
    if (row?.running) {
      if (row.worker_id !== ownerId) running++;
      continue;
    }
    await moveAside(dir, entry, note);
  }
  return running;
}

/**
 * Called before a claimed task runs in `dir`: a folder an earlier attempt of it left there is moved aside
 * (running the task clears its folder), to be shipped by `shipLeftOutput`.
 */
export async function setAsideEarlierAttempt(dir: string, taskId: string): Promise<void> {
  const note = await readNote(join(dir, taskId));
  if (note !== undefined) await moveAside(dir, taskId, note);
}

/** True while the process group a local_bash wrapper recorded in the folder has a process left. */
async function commandRuns(folder: string): Promise<boolean> {
  const pid = Number.parseInt(await readFile(join(folder, "pid"), "utf8").catch(() => ""), 10);
  return Number.isSafeInteger(pid) && pid > 0 && groupExists(pid);
}

/**
 * Ships, for every folder set aside, what its output file holds beyond the store's copy of that attempt —
 * what the command wrote after the last shipment of the worker that was lost. Only once the attempt is over
 * (the task moved to another attempt or ended: no owner writes it any more) and the command has ended; each
 * chunk continues the stored output exactly where it stops, and never past `limitBytes`. A folder is removed
 * once shipped. Resolves to how many still wait.
 */
export async function shipLeftOutput(client: SqlClient, dir: string, limitBytes: number): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(join(dir, LEFT));
  } catch {
    return 0;
  }
  let waiting = 0;
  for (const entry of entries) {
    const folder = join(dir, LEFT, entry);
    const note = await readNote(folder);
    if (note === undefined) {
      await rm(folder, { recursive: true, force: true });
      continue;
    }
    const task = await client.query<{ over: boolean }>(
      "SELECT NOT (attempt = $2 AND status = 'running') AS over FROM unforget_task WHERE id = $1",
      [note.taskId, note.attempt],
    );
    const row = task.rows[0];
    if (row !== undefined && (!row.over || (await commandRuns(folder)))) {
      waiting++;
      continue;
    }
    if (row !== undefined) await shipRest(client, folder, note, limitBytes);
    await rm(folder, { recursive: true, force: true });
  }
  return waiting;
}

async function shipRest(client: SqlClient, folder: string, note: Note, limitBytes: number): Promise<void> {
  const stored = await client.query<{ size: string | number }>(
    `SELECT byte_offset + length(bytes) AS size FROM unforget_task_output WHERE task_id = $1 AND attempt = $2
     ORDER BY byte_offset DESC LIMIT 1`,
    [note.taskId, note.attempt],
  );
  let offset = Number(stored.rows[0]?.size ?? 0);
  const handle = await open(join(folder, "output.log"), "r").catch(() => undefined);
  if (handle === undefined) return;
  try {
    const end = Math.min((await handle.stat()).size, limitBytes);
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    while (offset < end) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, end - offset), offset);
      if (bytesRead === 0) break;
      // Only into an attempt that is over, and only right after what is stored.
      await client.query(
        `INSERT INTO unforget_task_output (task_id, attempt, byte_offset, bytes)
         SELECT $1, $2, $3, $4 WHERE EXISTS (
           SELECT 1 FROM unforget_task WHERE id = $1 AND NOT (attempt = $2 AND status = 'running'))
         ON CONFLICT (task_id, attempt, byte_offset) DO NOTHING`,
        [note.taskId, note.attempt, offset, buffer.subarray(0, bytesRead)],
      );
      offset += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
