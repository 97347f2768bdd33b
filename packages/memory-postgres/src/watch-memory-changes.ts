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
  const [, xact, id, xmin, xmax, running] = CURSOR.exec(cursor) ?? [];
  // The pattern makes both present when it matches.
  if (xact === undefined || id === undefined) {
    throw new MemoryArgumentError(
      `Cursor ${JSON.stringify(cursor)} is not one a change or currentCursor() gave.`,
      {
        argument: "after",
      },
    );
  }
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
  // Shared by every iterator of this feed: a second iteration continues where the first one read to.
  const feed: FeedPosition = { cursor: options.after === undefined ? undefined : parseCursor(options.after) };
  const watched = new Set(options.namespaces);
  return {
    [Symbol.asyncIterator]() {
      const watch: WatchState = {
        client,
        options,
        watched,
        feed,
        queue: [],
        wake: undefined,
        reading: undefined,
        again: false,
        stopped: false,
        timer: undefined,
        subscriptions: [],
        started: undefined,
      };
      options.signal?.addEventListener("abort", () => void stopWatch(watch), { once: true });
      return {
        next: () => nextChange(watch),
        async return(): Promise<IteratorResult<MemoryChange>> {
          await stopWatch(watch);
          return { value: undefined, done: true };
        },
      };
    },
  };
}

/** Where a feed has read to (undefined until its first read takes the current cursor). */
interface FeedPosition {
  cursor: Cursor | undefined;
}

/** One iterator of the feed: the changes read and not yet taken, the read in flight, the subscriptions. */
interface WatchState {
  readonly client: SqlClient;
  readonly options: WatchOptions;
  readonly watched: ReadonlySet<string>;
  readonly feed: FeedPosition;
  readonly queue: MemoryChange[];
  /** Wakes a `next` waiting for changes. */
  wake: (() => void) | undefined;
  reading: Promise<void> | undefined;
  /** Whether another read was asked for while one ran (a notice, or a full page). */
  again: boolean;
  stopped: boolean;
  timer: NodeJS.Timeout | undefined;
  readonly subscriptions: SqlSubscription[];
  started: Promise<void> | undefined;
}

/** Reads the new changes into the queue, page by page; a read asked for while one runs joins it and runs again. */
function readChanges(watch: WatchState): Promise<void> {
  if (watch.reading) {
    watch.again = true;
    return watch.reading;
  }
  watch.reading = (async () => {
    try {
      do {
        watch.again = false;
        if (await readPage(watch)) watch.again = true;
      } while (watch.again && !watch.stopped);
    } catch (error) {
      watch.options.onError?.(error);
    } finally {
      watch.reading = undefined;
      watch.wake?.();
    }
  })();
  return watch.reading;
}

/** One page of changes after the cursor, into the queue; whether the page was full (more may follow). */
async function readPage(watch: WatchState): Promise<boolean> {
  const { client, feed } = watch;
  let cursor = feed.cursor ?? parseCursor(await currentCursor(client));
  feed.cursor = cursor;
  const { rows } = await client.query<ChangeRow>(
    `SELECT namespace, path, version, op, actor, xact_id::text AS xact, id::text AS id
     FROM memory_version
     WHERE namespace = ANY($1::text[]) AND (xact_id, id) > ($2::text::xid8, $3::bigint)
       AND xact_id < pg_snapshot_xmin(pg_current_snapshot())
       AND ($4::text IS NULL OR NOT pg_visible_in_snapshot(xact_id, $4::text::pg_snapshot))
     ORDER BY xact_id, id LIMIT ${PAGE}`,
    [[...watch.watched], cursor.xact, cursor.id, cursor.seen?.text ?? null],
  );
  for (const row of rows) {
    cursor = advance(cursor, row.xact, row.id);
    feed.cursor = cursor;
    watch.queue.push({
      namespace: row.namespace,
      path: row.path,
      version: Number(row.version),
      op: row.op,
      actor: row.actor,
      cursor: formatCursor(cursor),
    });
  }
  return rows.length === PAGE;
}

/** Subscribes to each namespace's channel, starts the poll, and reads once. */
async function startWatch(watch: WatchState): Promise<void> {
  const { client, options } = watch;
  const read = () => void readChanges(watch);
  // One channel per namespace: a notice names nothing, it only says "read".
  for (const namespace of watch.watched) {
    watch.subscriptions.push(await client.listen(changeChannel(namespace), read, { onReconnect: read }));
  }
  if (watch.subscriptions.some((subscription) => !subscription.live)) {
    options.onWarning?.(
      `Change notices cannot arrive on ${client.location} (LISTEN is unavailable, e.g. behind PgBouncer transaction pooling): the watch polls every ${options.pollIntervalMs ?? 5_000} ms instead.`,
    );
  }
  watch.timer = setInterval(read, options.pollIntervalMs ?? 5_000);
  watch.timer.unref();
  await readChanges(watch);
}

async function stopWatch(watch: WatchState): Promise<void> {
  if (watch.stopped) return;
  watch.stopped = true;
  if (watch.timer) clearInterval(watch.timer);
  watch.wake?.();
  for (const subscription of watch.subscriptions) await subscription.close();
}

/** The next change: from the queue, or after the next read that finds one; done once stopped. */
async function nextChange(watch: WatchState): Promise<IteratorResult<MemoryChange>> {
  watch.started ??= startWatch(watch);
  await watch.started;
  for (;;) {
    const change = watch.queue.shift();
    if (change) return { value: change, done: false };
    if (watch.stopped || watch.options.signal?.aborted) {
      await stopWatch(watch);
      return { value: undefined, done: true };
    }
    await new Promise<void>((resolve) => {
      watch.wake = resolve;
    });
    watch.wake = undefined;
  }
}
