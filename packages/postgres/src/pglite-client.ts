import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ConfigurationError } from "@unforget/core";
import { acquireDataDirLock } from "./pglite-lock.ts";
import type { SqlClient, SqlQueryable, SqlResult } from "./sql-client.ts";
import { classifyFailure, failureError } from "./sql-failure.ts";

/** The part of PGlite's API the client uses (the package is an optional peer, loaded on demand). */
interface PGliteResult<Row> {
  rows: Row[];
  affectedRows?: number;
}

interface PGliteQueryable {
  query<Row>(text: string, values?: unknown[]): Promise<PGliteResult<Row>>;
  /** The simple protocol: several statements, no parameters. */
  exec(text: string): Promise<Array<PGliteResult<unknown>>>;
}

interface PGliteInstance extends PGliteQueryable {
  transaction<T>(work: (transaction: PGliteQueryable) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

async function loadPGlite(): Promise<{ create(dataDir: string): Promise<PGliteInstance> }> {
  try {
    const module = (await import("@electric-sql/pglite")) as unknown as {
      PGlite: { create(dataDir: string): Promise<PGliteInstance> };
    };
    return module.PGlite;
  } catch (error) {
    throw new ConfigurationError(
      "An embedded database needs the optional peer @electric-sql/pglite: install it (pnpm add @electric-sql/pglite@0.5), or pass `url` to use a PostgreSQL server.",
      { setting: "pglite", cause: error },
    );
  }
}

const NO_DEADLINE = 0;

/**
 * A client on an embedded PGlite database in `dataDir` (created if missing), after taking the data dir's lock:
 * a second process gets `StoreLockedError`. One connection: statements and transactions run one at a time.
 */
export async function createPGliteClient(dataDir: string): Promise<SqlClient> {
  const location = resolve(dataDir);
  const PGlite = await loadPGlite();
  await mkdir(dirname(location), { recursive: true });
  const lock = await acquireDataDirLock(location);
  let database: PGliteInstance;
  try {
    database = await PGlite.create(location);
  } catch (error) {
    await lock.release();
    throw failureError(error, location, "fatal", NO_DEADLINE);
  }
  let closed = false;

  // Like node-postgres: without parameters a text may hold several statements (a migration), with them one.
  const run = async <Row>(
    target: PGliteQueryable,
    text: string,
    values: readonly unknown[] | undefined,
  ): Promise<SqlResult<Row>> => {
    if (closed)
      throw new ConfigurationError(`The PGlite client on ${location} was closed.`, { setting: "pglite" });
    try {
      const result =
        values === undefined || values.length === 0
          ? ((await target.exec(text)).at(-1) ?? { rows: [] })
          : await target.query<Row>(text, values as unknown[]);
      return { rows: result.rows as Row[], rowCount: result.affectedRows ?? 0 };
    } catch (error) {
      throw failureError(error, location, classifyFailure(error), NO_DEADLINE);
    }
  };

  return {
    kind: "pglite",
    location,
    query: (text, values) => run(database, text, values),
    async transaction(work) {
      if (closed)
        throw new ConfigurationError(`The PGlite client on ${location} was closed.`, { setting: "pglite" });
      return database.transaction((transaction) => {
        const scoped: SqlQueryable = { query: (text, values) => run(transaction, text, values) };
        return work(scoped);
      });
    },
    async listen(channel, onNotice) {
      const unlisten = await database.listen(channel, onNotice);
      return { live: true, close: () => unlisten() };
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await database.close();
      } finally {
        await lock.release();
      }
    },
  };
}
