import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { pgServerFromEnvironment } from "@unforget/testing/postgres";
import { afterAll, beforeAll } from "vitest";

let counter = 0;
/** A namespace no other scenario of the run uses. */
export function freshNamespace(): string {
  counter++;
  return `team/t${process.pid}/project/p${counter}-${Date.now().toString(36)}`;
}

/** One PGlite database for the test file (opening one takes seconds), closed and removed after it. */
export function usePGlite(): () => SqlClient {
  let folder: string | undefined;
  let client: SqlClient | undefined;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "memory-postgres-"));
    client = await createSqlClient({ pglite: join(folder, "data") });
  });
  afterAll(async () => {
    await client?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });
  return () => {
    if (!client) throw new Error("the PGlite database is not open yet");
    return client;
  };
}

export const server = pgServerFromEnvironment();

/** A database of the test file's own on the run's server, with its URL; dropped after the file. */
export function useServerDatabase(): () => { url: string; client: SqlClient } {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let client: SqlClient | undefined;
  beforeAll(async () => {
    if (!server) return;
    database = await server.createDatabase();
    client = await createSqlClient({ url: database.url });
  });
  afterAll(async () => {
    await client?.close();
    await database?.drop();
  });
  return () => {
    if (!database || !client) throw new Error("the server database is not ready");
    return { url: database.url, client };
  };
}
