import { open, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SqlClient } from "@unforget/postgres";
import { LeaseLostError, type TaskOutputShipper, type TaskOutputStore } from "@unforget/tasks";

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

/**
 * Output in `unforget_task_output`: chunks of at most 256 KiB per task and attempt. Readers see only
 * committed chunks, so any machine reads exact offsets. A worker's runner writes its local file first; the
 * shipper copies it in order, every second or every 256 KiB, each insert fenced by the attempt.
 */
export function createPostgresTaskOutputStore(
  client: SqlClient,
  options: PostgresOutputOptions = {},
): TaskOutputStore {
  const limitBytes = options.limitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
  const shipIntervalMs = options.shipIntervalMs ?? SHIP_INTERVAL_MS;
  const attemptOf = "COALESCE($2::integer, (SELECT attempt FROM unforget_task WHERE id = $1))";

  const store: TaskOutputStore = {
    async stat(id, attempt) {
      // The last chunk, by a backward scan of the primary key: constant time however long the output is.
      const result = await client.query<SizeRow>(
        `SELECT byte_offset + length(bytes) AS size, committed_at AS last
         FROM unforget_task_output WHERE task_id = $1 AND attempt = ${attemptOf}
         ORDER BY byte_offset DESC LIMIT 1`,
        [id, attempt ?? null],
      );
      const row = result.rows[0];
      const size = Number(row?.size ?? 0);
      return size === 0 || row?.last == null ? { size } : { size, lastWriteAt: new Date(row.last).getTime() };
    },

    async read(id, offset, maxBytes, attempt) {
      const result = await client.query<{ byte_offset: string | number; bytes: Uint8Array }>(
        `SELECT byte_offset, bytes FROM unforget_task_output
         WHERE task_id = $1 AND attempt = ${attemptOf}
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
    },

    localPath: () => undefined,

    follow(task) {
      let shipped = 0;
      let lastShipAt = Date.now();
      let stopped = false;
      let overflowed = false;
      let failure: unknown;
      let lastError: unknown;
      let running: Promise<void> = Promise.resolve();
      // A worker restarted on this folder ships what is left here if this one is lost (left-output.ts).
      writeFile(
        join(dirname(task.localPath), SHIPPING_NOTE),
        JSON.stringify({ taskId: task.id, attempt: task.attempt }),
      ).catch(() => undefined);

      /** Ships everything the file holds now (up to the limit), in order. */
      const shipAvailable = async (): Promise<void> => {
        const handle = await open(task.localPath, "r").catch(() => undefined);
        if (handle === undefined) return;
        try {
          const { size } = await handle.stat();
          const end = Math.min(size, limitBytes);
          const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
          while (shipped < end) {
            const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, end - shipped), shipped);
            if (bytesRead === 0) break;
            const inserted = await client.query(
              `INSERT INTO unforget_task_output (task_id, attempt, byte_offset, bytes)
               SELECT $1, $2, $3, $4 WHERE EXISTS (
                 SELECT 1 FROM unforget_task WHERE id = $1 AND attempt = $2 AND status = 'running')
               ON CONFLICT (task_id, attempt, byte_offset) DO NOTHING`,
              [task.id, task.attempt, shipped, buffer.subarray(0, bytesRead)],
            );
            if (inserted.rowCount === 0) {
              const retried = await client.query(
                "SELECT 1 FROM unforget_task_output WHERE task_id = $1 AND attempt = $2 AND byte_offset = $3",
                [task.id, task.attempt, shipped],
              );
              // Not an earlier try of this very insert: the task has moved on, and this attempt may not write.
              if (retried.rows.length === 0) {
                throw new LeaseLostError(
                  `Task ${task.id} is no longer at attempt ${task.attempt} (or has ended); its output from here is not kept.`,
                  { taskId: task.id },
                );
              }
            }
            shipped += bytesRead;
          }
          if (size > limitBytes && !overflowed) {
            overflowed = true;
            task.onOverflow(limitBytes);
          }
        } finally {
          await handle.close();
        }
      };

      // A refused insert (the task moved on) ends the shipping for good; anything else (a lost connection,
      // a restart) is tried again from the same offset at the next shipment or flush.
      const ship = (): Promise<void> => {
        running = running.then(async () => {
          if (failure !== undefined) return;
          try {
            await shipAvailable();
            lastShipAt = Date.now();
            lastError = undefined;
          } catch (error) {
            if (error instanceof LeaseLostError) failure = error;
            else lastError = error;
          }
        });
        return running;
      };

      const timer = setInterval(() => {
        if (stopped) return;
        void (async () => {
          const handle = await open(task.localPath, "r").catch(() => undefined);
          const size = handle === undefined ? 0 : (await handle.stat()).size;
          await handle?.close();
          if (
            size - shipped >= CHUNK_BYTES ||
            (size > shipped && Date.now() - lastShipAt >= shipIntervalMs)
          ) {
            await ship();
          }
        })().catch(() => undefined);
      }, WATCH_MS);
      timer.unref();

      const shipper: TaskOutputShipper = {
        async flush() {
          await ship();
          if (failure !== undefined) throw failure;
          if (lastError !== undefined) throw lastError;
        },
        stop() {
          stopped = true;
          clearInterval(timer);
        },
      };
      return shipper;
    },
  };
  return store;
}
