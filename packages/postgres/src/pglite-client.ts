import { mkdir, readlink, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { ConfigurationError, isUnforgetError } from "@unforget/core";
import { acquireDataDirLock, type DataDirLock } from "./pglite-lock.ts";
import { StoreUnavailableError } from "./postgres-errors.ts";
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

/** Emscripten's own errno numbers (not the host's), as PGlite's file system reports them. */
const EMSCRIPTEN_ERRNO: Readonly<Record<number, string>> = {
  2: "EACCES, permission denied",
  20: "EEXIST, a file is in the way",
  29: "EIO, an input/output error",
  31: "EISDIR, a folder where a file was expected",
  32: "ELOOP, too many symbolic links",
  44: "ENOENT, a file or folder is missing",
  51: "ENOSPC, the disk is full",
  54: "ENOTDIR, not a folder",
  63: "EPERM, not permitted",
  69: "EROFS, a read-only file system",
};

/** Why opening failed, in words, whatever was thrown (an Error, a Node error, an Emscripten ErrnoError). */
export function describeFailure(error: unknown): string {
  const { errno, code, message } = (error ?? {}) as { errno?: unknown; code?: unknown; message?: unknown };
  if (typeof message === "string" && message !== "") return message;
  if (typeof code === "string") return code;
  if (typeof errno === "number") return EMSCRIPTEN_ERRNO[errno] ?? `errno ${errno}`;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** Why a path could not be resolved or made: a file where a folder belongs is said as such. */
function pathProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EEXIST" || code === "ENOTDIR"
    ? `a part of its path is a file, not a folder (${describeFailure(error)})`
    : describeFailure(error);
}

/** The typed error for a data dir that cannot be opened: it names the folder and why. */
function openFailure(location: string, why: string, cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    `PGlite could not open the data dir ${location}: ${why}. Give the path of a PGlite data dir, or of a folder that does not exist yet (it is created), that this process can read and write.`,
    { location, reason: "data-dir", cause },
  );
}

/**
 * The data dir's real path: symbolic links followed (also one that points where nothing is yet), so that
 * PGlite, which cannot open a folder through a link, gets the folder itself, and every spelling of one folder
 * takes the same lock. A folder not there yet gets its parent created; PGlite creates the folder.
 */
async function resolveDataDir(dataDir: string): Promise<string> {
  let path = resolve(dataDir);
  for (let hops = 0; ; hops++) {
    try {
      path = await realpath(path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT")
        throw openFailure(path, pathProblem(error), error);
    }
    const target = await readlink(path).catch(() => undefined);
    if (target === undefined || hops === 40) {
      const parent = dirname(path);
      try {
        await mkdir(parent, { recursive: true });
        path = join(await realpath(parent), basename(path));
      } catch (error) {
        throw openFailure(path, pathProblem(error), error);
      }
      return path;
    }
    path = resolve(dirname(path), target);
  }
  if (!(await stat(path)).isDirectory()) throw openFailure(path, "it is a file, not a folder");
  return path;
}

/**
 * A client on an embedded PGlite database in `dataDir` (created if missing; symbolic links followed), after
 * taking the data dir's lock: a second process gets `StoreLockedError`; a folder that cannot be opened is a
 * `StoreUnavailableError` naming it and why. One connection: statements and transactions run one at a time.
 */
export async function createPGliteClient(dataDir: string): Promise<SqlClient> {
  const PGlite = await loadPGlite();
  const location = await resolveDataDir(dataDir);
  let lock: DataDirLock;
  try {
    lock = await acquireDataDirLock(location);
  } catch (error) {
    throw isUnforgetError(error) ? error : openFailure(location, describeFailure(error), error);
  }
  let database: PGliteInstance;
  try {
    database = await PGlite.create(location);
  } catch (error) {
    await lock.release();
    throw openFailure(location, `PGlite failed to start on it (${describeFailure(error)})`, error);
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
