import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { SqlClient } from "@unforget/postgres";
import { CHUNK_BYTES, SHIPPING_NOTE } from "./postgres-task-output-store.ts";

/** Where a restarted worker keeps the folders of attempts its predecessor left, until they are shipped. */
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

/**
 * Called when a worker starts on `dir`, before it claims anything: the task folders a worker that ran there
 * before left (it was killed, or closed while its tasks ran) are moved aside, because a new claim of the same
 * task here clears the task's folder. Their commands may still be running; a rename keeps their output file
 * open where it goes.
 */
export async function setAsideLeftOutput(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry === LEFT) continue;
    const note = await readNote(join(dir, entry));
    if (note === undefined) continue;
    await mkdir(join(dir, LEFT), { recursive: true });
    // Another worker started on the same folder at the same moment may have moved it first.
    await rename(join(dir, entry), join(dir, LEFT, `${entry}.${note.attempt}`)).catch(() => undefined);
  }
}

/** True while the process group a local_bash wrapper recorded in the folder has a process left. */
async function commandRuns(folder: string): Promise<boolean> {
  const pid = Number.parseInt(await readFile(join(folder, "pid"), "utf8").catch(() => ""), 10);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
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
