import { ConfigurationError } from "@unforget/core";
import { createPGliteClient } from "./pglite-client.ts";
import { createServerClient, type ServerClientOptions } from "./server-client.ts";
import type { SqlClient } from "./sql-client.ts";

/** Where the database is: a server (`url`, or PG* variables), a pool of the caller's, or a PGlite data dir. */
export type SqlClientOptions = ServerClientOptions | { pglite: string };

/**
 * Opens a client: `{ url }` (or `{}` to read PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) on a server
 * through the process's shared pool, `{ pool }` on a `pg` Pool of the caller's, or `{ pglite: dataDir }` on an
 * embedded database (the optional peer `@electric-sql/pglite`, one process per data dir).
 */
export async function createSqlClient(options: SqlClientOptions = {}): Promise<SqlClient> {
  if ("pglite" in options) {
    if (typeof options.pglite !== "string" || options.pglite === "") {
      throw new ConfigurationError(
        "`pglite` must be the path of a data dir (a folder, created if missing).",
        {
          setting: "pglite",
        },
      );
    }
    return createPGliteClient(options.pglite);
  }
  if (options.url !== undefined && !/^postgres(?:ql)?:\/\//.test(options.url)) {
    throw new ConfigurationError(
      "`url` must be a PostgreSQL URL such as postgres://user:password@host:5432/database.",
      { setting: "url" },
    );
  }
  return createServerClient(options);
}
