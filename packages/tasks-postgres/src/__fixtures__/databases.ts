import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { pgServerFromEnvironment } from "@unforget/testing/postgres";

/** A database for one test file: PGlite in a fresh folder, or a fresh database on the run's server. */
export interface TestDatabase {
  readonly name: "pglite" | "server";
  /** A client on it; `open()` gives another (on the server: another pool user; PGlite: the same client). */
  client: SqlClient;
  open(): Promise<SqlClient>;
  /** The server URL (server only), for child processes. */
  url?: string;
  /** Empties the task tables between scenarios. */
  reset(): Promise<void>;
  drop(): Promise<void>;
}

const TABLES =
  "unforget_task_output, unforget_task_event, unforget_task_command, unforget_task_message, unforget_task_owner, unforget_task";

async function reset(client: SqlClient): Promise<void> {
  const exists = await client.query<{ present: boolean }>(
    "SELECT to_regclass('unforget_task') IS NOT NULL AS present",
  );
  if (exists.rows[0]?.present) await client.query(`TRUNCATE ${TABLES} CASCADE`);
}

export async function openPglite(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), "tasks-pglite-"));
  const client = await createSqlClient({ pglite: join(dir, "data") });
  return {
    name: "pglite",
    client,
    open: async () => client,
    reset: () => reset(client),
    async drop() {
      await client.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Undefined (the server tests skip, with one line) when no server is configured and CI is not set. */
export async function openServerDatabase(): Promise<TestDatabase | undefined> {
  const server = pgServerFromEnvironment();
  if (server === undefined) return undefined;
  const database = await server.createDatabase();
  const clients: SqlClient[] = [];
  const open = async () => {
    const client = await createSqlClient({ url: database.url });
    clients.push(client);
    return client;
  };
  const client = await open();
  return {
    name: "server",
    client,
    open,
    url: database.url,
    reset: () => reset(client),
    async drop() {
      for (const opened of clients) await opened.close().catch(() => undefined);
      await database.drop();
    },
  };
}
