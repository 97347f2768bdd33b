import { open, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SqlClient } from "@unforget/postgres";
import {
  LeaseLostError,
  type TaskOutputFollow,
  type TaskOutputShipper,
  type TaskOutputStat,
  type TaskOutputStore,
} from "@unforget/tasks";

/** Largest chunk row: a read of the default 256 KiB touches at most two rows. */
export const CHUNK_BYTES = 262_144;
/** Written into a task's local folder when its output starts to be shipped: the task and the attempt it holds. */
export const SHIPPING_NOTE = "shipping.json";
/** The most output one task may keep (per attempt); past it the task is stopped. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 1_073_741_824;
/** Output is shipped at least this often while it grows (and at once when a chunk is full). */
export const SHIP_INTERVAL_MS = 1_000;
/** How often the local file's size is looked at between shipments. */
const WATCH_MS = 100;

export interface PostgresOutputOptions {
  /** Per task and attempt; past it the task is stopped with reason `output_limit` (default 1 GiB). */
  limitBytes?: number;
  /** How often growing output is shipped (default 1 000 ms). */
  shipIntervalMs?: number;
}

interface SizeRow {
  size: string | number;
  last: Date | string | null;
}

/** The attempt a query means: the one given, or the task's current attempt. */
const ATTEMPT_OF = "COALESCE($2::integer, (SELECT attempt FROM unforget_task WHERE id = $1))";

/** The size of an attempt's output and when its last chunk was committed. */
async function statOutput(
  client: SqlClient,
  id: string,
  attempt: number | undefined,
): Promise<TaskOutputStat> {
  // The last chunk, by a backward scan of the primary key: constant time however long the output is.
  const result = await client.query<SizeRow>(
    `SELECT byte_offset + length(bytes) AS size, committed_at AS last
     FROM unforget_task_output WHERE task_id = $1 AND attempt = ${ATTEMPT_OF}
     ORDER BY byte_offset DESC LIMIT 1`,
    [id, attempt ?? null],
  );
  const row = result.rows[0];
  const size = Number(row?.size ?? 0);
  return size === 0 || row?.last == null ? { size } : { size, lastWriteAt: new Date(row.last).getTime() };
}

/** At most `maxBytes` of committed output from `offset`, copied from the chunks that overlap the range. */
async function readOutput(
  client: SqlClient,
  id: string,
  offset: number,
  maxBytes: number,
  attempt: number | undefined,
): Promise<Buffer> {
  const result = await client.query<{ byte_offset: string | number; bytes: Uint8Array }>(
    `SELECT byte_offset, bytes FROM unforget_task_output
     WHERE task_id = $1 AND attempt = ${ATTEMPT_OF}
       AND byte_offset > $3::bigint - $5::bigint AND byte_offset < $3::bigint + $4::bigint
     ORDER BY byte_offset`,
    // A chunk holds at most CHUNK_BYTES: one that overlaps the range starts less than that before it.
    [id, attempt ?? null, offset, maxBytes, CHUNK_BYTES],
  );
  const out = Buffer.alloc(maxBytes);
  let filled = 0;
  for (const row of result.rows) {
    const start = Number(row.byte_offset);
    // Chunks are contiguous; a gap would be a bug, and the read stops before it rather than invent bytes.
    if (start > offset + filled) break;
    const bytes = Buffer.from(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
    // A short chunk that ends before the offset (the range starts a full chunk earlier) adds nothing.
    if (start + bytes.length <= offset + filled) continue;
    const from = offset + filled - start;
    filled += bytes.copy(out, filled, from, Math.min(bytes.length, from + maxBytes - filled));
  }
  return out.subarray(0, filled);
}

/** What one task's shipper holds: where it has got to, and how its last shipment went. */
interface ShipperState {
  readonly client: SqlClient;
  readonly task: TaskOutputFollow;
  readonly limitBytes: number;
  readonly shipIntervalMs: number;
  /** Bytes of the local file stored so far. */
  shipped: number;
  lastShipAt: number;
  stopped: boolean;
  overflowed: boolean;
  /** A refused insert: the task moved on, and shipping has ended for good. */
  failure: unknown;
  /** The last shipment's error, tried again at the next one. */
  lastError: unknown;
  /** The shipment in progress; shipments run one after another. */
  running: Promise<void>;
}

/** Stores one chunk at `offset`, fenced by the attempt; `LeaseLostError` when the task has moved on. */
async function insertChunk(state: ShipperState, offset: number, bytes: Buffer): Promise<void> {
  const { client, task } = state;
  const inserted = await client.query(
    `INSERT INTO unforget_task_output (task_id, attempt, byte_offset, bytes)
     SELECT $1, $2, $3, $4 WHERE EXISTS (
       SELECT 1 FROM unforget_task WHERE id = $1 AND attempt = $2 AND status = 'running')
     ON CONFLICT (task_id, attempt, byte_offset) DO NOTHING`,
    [task.id, task.attempt, offset, bytes],
  );
  if (inserted.rowCount !== 0) return;
  const retried = await client.query(
    "SELECT 1 FROM unforget_task_output WHERE task_id = $1 AND attempt = $2 AND byte_offset = $3",
    [task.id, task.attempt, offset],
  );
  // Not an earlier try of this very insert: the task has moved on, and this attempt may not write.
  if (retried.rows.length === 0) {
    throw new LeaseLostError(
      `Task ${task.id} is no longer at attempt ${task.attempt} (or has ended); its output from here is not kept.`,
      { taskId: task.id },
    );
  }
}

/** Ships everything the file holds now (up to the limit), in order. */
async function shipAvailable(state: ShipperState): Promise<void> {
  const { task, limitBytes } = state;
  const handle = await open(task.localPath, "r").catch(() => undefined);
  if (handle === undefined) return;
  try {
    const { size } = await handle.stat();
    const end = Math.min(size, limitBytes);
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    while (state.shipped < end) {
      const { bytesRead } = await handle.read(
        buffer,
        0,
        Math.min(CHUNK_BYTES, end - state.shipped),
        state.shipped,
      );
      if (bytesRead === 0) break;
      await insertChunk(state, state.shipped, buffer.subarray(0, bytesRead));
      state.shipped += bytesRead;
    }
    if (size > limitBytes && !state.overflowed) {
      state.overflowed = true;
      task.onOverflow(limitBytes);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Queues a shipment after the one in progress. A refused insert (the task moved on) ends the shipping for
 * good; anything else (a lost connection, a restart) is tried again from the same offset at the next
 * shipment or flush.
 */
function ship(state: ShipperState): Promise<void> {
  state.running = state.running.then(async () => {
    if (state.failure !== undefined) return;
    try {
      await shipAvailable(state);
      state.lastShipAt = Date.now();
      state.lastError = undefined;
    } catch (error) {
      if (error instanceof LeaseLostError) state.failure = error;
      else state.lastError = error;
    }
  });
  return state.running;
}

/** One look at the local file: ships when a full chunk waits or growth is older than the ship interval. */
async function shipWhenDue(state: ShipperState): Promise<void> {
  const handle = await open(state.task.localPath, "r").catch(() => undefined);
  const size = handle === undefined ? 0 : (await handle.stat()).size;
  await handle?.close();
  if (
    size - state.shipped >= CHUNK_BYTES ||
    (size > state.shipped && Date.now() - state.lastShipAt >= state.shipIntervalMs)
  ) {
    await ship(state);
  }
}

/** Starts shipping a task's local file: looked at every `WATCH_MS`, shipped in order, flushed on demand. */
function followOutput(
  client: SqlClient,
  settings: { limitBytes: number; shipIntervalMs: number },
  task: TaskOutputFollow,
): TaskOutputShipper {
  const state: ShipperState = {
    client,
    task,
    ...settings,
    shipped: 0,
    lastShipAt: Date.now(),
    stopped: false,
    overflowed: false,
    failure: undefined,
    lastError: undefined,
    running: Promise.resolve(),
  };
  // A worker restarted on this folder ships what is left here if this one is lost (left-output.ts).
  writeFile(
    join(dirname(task.localPath), SHIPPING_NOTE),
    JSON.stringify({ taskId: task.id, attempt: task.attempt }),
  ).catch(() => undefined);
  const timer = setInterval(() => {
    if (state.stopped) return;
    shipWhenDue(state).catch(() => undefined);
  }, WATCH_MS);
  timer.unref();
  return {
    async flush() {
      await ship(state);
      if (state.failure !== undefined) throw state.failure;
      if (state.lastError !== undefined) throw state.lastError;
    },
    stop() {
      state.stopped = true;
      clearInterval(timer);
    },
  };
}

/**
 * Output in `unforget_task_output`: chunks of at most 256 KiB per task and attempt. Readers see only
 * committed chunks, so any machine reads exact offsets. A worker's runner writes its local file first; the
 * shipper copies it in order, every second or every 256 KiB, each insert fenced by the attempt.
 */
export function createPostgresTaskOutputStore(
  client: SqlClient,
  options: PostgresOutputOptions = {},
): TaskOutputStore {
  const settings = {
    limitBytes: options.limitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES,
    shipIntervalMs: options.shipIntervalMs ?? SHIP_INTERVAL_MS,
  };
  return {
    stat: (id, attempt) => statOutput(client, id, attempt),
    read: (id, offset, maxBytes, attempt) => readOutput(client, id, offset, maxBytes, attempt),
    localPath: () => undefined,
    follow: (task) => followOutput(client, settings, task),
  };
}
