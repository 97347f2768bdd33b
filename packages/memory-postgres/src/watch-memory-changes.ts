import { MemoryArgumentError } from "@unforget/memory";
import type { SqlClient, SqlSubscription } from "@unforget/postgres";
import { changeChannel } from "./memory-sql.ts";

/** One change to a memory, as a watcher receives it. */
export interface MemoryChange {
  namespace: string;
  path: string;
  /** The memory's version after the change. */
  version: number;
  op: "write" | "delete" | "rename-from" | "rename-to";
  /** Who made it (the writing store's actor and machine). */
  actor: string;
  /** Pass as `after` to resume right after this change. */
  cursor: string;
}

export interface WatchOptions {
  /** Namespaces to watch (each in the store's allow-list). Default: the store's own. */
  namespaces?: readonly string[];
  /** Resume after this cursor (a change's `cursor`). Default: changes from now on. */
  after?: string;
  /** Ends the watch. */
  signal?: AbortSignal;
  /** How often to read the versions without a notice. Default 5,000 ms. */
  pollIntervalMs?: number;
  /** Called once when notices cannot arrive (LISTEN unavailable) and the watch only polls. */
  onWarning?: (message: string) => void;
  /** Called when reading the versions failed (the watch keeps trying). */
  onError?: (error: unknown) => void;
}

const PAGE = 500;
// `xact:id` (a change's own position), optionally `@xmin:xmax:xip,…`: the snapshot of the moment the cursor
// stands for, whose visible changes were delivered already.
const CURSOR =
  /^([0-9]{1,20}):([0-9]{1,19})(?:@([0-9]{1,20}):([0-9]{1,20}):((?:[0-9]{1,20}(?:,[0-9]{1,20})*)?))?$/;
const LAST_ID = "9223372036854775807";

interface Cursor {
  xact: string;
  id: string;
  /** Changes visible in this snapshot are behind the cursor whatever their position; dropped once passed. */
  seen?: { text: string; xmax: bigint };
}

/**
 * The cursor of now: every change committed so far is behind it, every change still to commit ahead. A
 * position alone cannot say it — transaction ids are not in commit order, and the oldest transaction still open
 * anywhere on the server (another database's too) may be far older than changes already committed — so the
 * cursor carries the snapshot of this moment until the feed has passed it.
 */
export async function currentCursor(client: SqlClient): Promise<string> {
  const { rows } = await client.query<{ snapshot: string }>("SELECT pg_current_snapshot()::text AS snapshot");
  const snapshot = rows[0]?.snapshot ?? "1:1:";
  const xmin = snapshot.split(":")[0] ?? "1";
  return `${BigInt(xmin) - 1n}:${LAST_ID}@${snapshot}`;
}

function parseCursor(cursor: string): Cursor {
  const match = CURSOR.exec(cursor);
  if (!match) {
    throw new MemoryArgumentError(
      `Cursor ${JSON.stringify(cursor)} is not one a change or currentCursor() gave.`,
      {
        argument: "after",
      },
    );
  }
  const [, xact, id, xmin, xmax, running] = match as unknown as [
    string,
    string,
    string,
    string?,
    string?,
    string?,
  ];
  return {
    xact,
    id,
    ...(xmin !== undefined && xmax !== undefined
      ? { seen: { text: `${xmin}:${xmax}:${running ?? ""}`, xmax: BigInt(xmax) } }
      : {}),
  };
}

/** The cursor after a change at `xact:id`: the snapshot stays until no change it shows can come later. */
function advance(cursor: Cursor, xact: string, id: string): Cursor {
  return cursor.seen !== undefined && BigInt(xact) < cursor.seen.xmax
    ? { xact, id, seen: cursor.seen }
    : { xact, id };
}

function formatCursor(cursor: Cursor): string {
  return `${cursor.xact}:${cursor.id}${cursor.seen ? `@${cursor.seen.text}` : ""}`;
}

interface ChangeRow {
  namespace: string;
  path: string;
  version: number;
  op: MemoryChange["op"];
  actor: string;
  xact: string;
  id: string;
}

/**
 * The change feed: versions in (transaction id, id) order, read only below the oldest running transaction
 * (`pg_snapshot_xmin`), so that a transaction that commits late is never skipped — ids are not in commit
 * order. NOTIFY (a channel per namespace, empty notices) is a hint; reads happen on start, on every notice,
 * after a reconnect and on an interval.
 */
export function watchMemoryChanges(
  client: SqlClient,
  options: WatchOptions & { namespaces: readonly string[] },
): AsyncIterable<MemoryChange> {
  let cursor = options.after === undefined ? undefined : parseCursor(options.after);
  const watched = new Set(options.namespaces);
  return {
    [Symbol.asyncIterator]() {
      const queue: MemoryChange[] = [];
      let wake: (() => void) | undefined;
      let reading: Promise<void> | undefined;
      let again = false;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const subscriptions: SqlSubscription[] = [];
      let started: Promise<void> | undefined;

      const read = async (): Promise<void> => {
        if (reading) {
          again = true;
          return reading;
        }
        reading = (async () => {
          try {
            do {
              again = false;
              cursor ??= parseCursor(await currentCursor(client));
              const { rows } = await client.query<ChangeRow>(
                `SELECT namespace, path, version, op, actor, xact_id::text AS xact, id::text AS id
                 FROM memory_version
                 WHERE namespace = ANY($1::text[]) AND (xact_id, id) > ($2::text::xid8, $3::bigint)
                   AND xact_id < pg_snapshot_xmin(pg_current_snapshot())
                   AND ($4::text IS NULL OR NOT pg_visible_in_snapshot(xact_id, $4::text::pg_snapshot))
                 ORDER BY xact_id, id LIMIT ${PAGE}`,
                [[...watched], cursor.xact, cursor.id, cursor.seen?.text ?? null],
              );
              for (const row of rows) {
                cursor = advance(cursor, row.xact, row.id);
                queue.push({
                  namespace: row.namespace,
                  path: row.path,
                  version: Number(row.version),
                  op: row.op,
                  actor: row.actor,
                  cursor: formatCursor(cursor),
                });
              }
              if (rows.length === PAGE) again = true;
            } while (again && !stopped);
          } catch (error) {
            options.onError?.(error);
          } finally {
            reading = undefined;
            wake?.();
          }
        })();
        return reading;
      };

      const start = async () => {
        // One channel per namespace: a notice names nothing, it only says "read".
        for (const namespace of watched) {
          subscriptions.push(
            await client.listen(changeChannel(namespace), () => void read(), {
              onReconnect: () => void read(),
            }),
          );
        }
        if (subscriptions.some((subscription) => !subscription.live)) {
          options.onWarning?.(
            `Change notices cannot arrive on ${client.location} (LISTEN is unavailable, e.g. behind PgBouncer transaction pooling): the watch polls every ${options.pollIntervalMs ?? 5_000} ms instead.`,
          );
        }
        timer = setInterval(() => void read(), options.pollIntervalMs ?? 5_000);
        timer.unref();
        await read();
      };

      const stop = async () => {
        if (stopped) return;
        stopped = true;
        if (timer) clearInterval(timer);
        wake?.();
        for (const subscription of subscriptions) await subscription.close();
      };
      options.signal?.addEventListener("abort", () => void stop(), { once: true });

      return {
        async next(): Promise<IteratorResult<MemoryChange>> {
          started ??= start();
          await started;
          for (;;) {
            const change = queue.shift();
            if (change) return { value: change, done: false };
            if (stopped || options.signal?.aborted) {
              await stop();
              return { value: undefined, done: true };
            }
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = undefined;
          }
        },
        async return(): Promise<IteratorResult<MemoryChange>> {
          await stop();
          return { value: undefined, done: true };
        },
      };
    },
  };
}
