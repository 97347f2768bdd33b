import { ConfigurationError } from "@unforget/core";
import type { SecretScanner } from "@unforget/memory";
import { createSqlClient } from "@unforget/postgres";
import { createPostgresMemoryStore, type PostgresMemoryStore } from "./postgres-memory-store.ts";

/** A server or a data dir, the namespace and who writes (the options of team memory on a database). */
export interface OpenPostgresMemoryStoreOptions {
  /** A server (`postgres://…`). */
  url?: string;
  /** Or an embedded database's data dir. */
  pglite?: string;
  namespace: string;
  actor: string;
  /** The scan every write passes first: `createTeamMemory({ open })` of `@unforget/memory` hands it over. */
  secretScanner?: SecretScanner;
}

/**
 * Opens the client and the store in one step (the store owns the client: `close()` closes both). Team memory
 * opens it through `createTeamMemory({ open: ({ secretScanner }) => openPostgresMemoryStore({ …, secretScanner }) })`
 * of `@unforget/memory`, which names no backend.
 */
export async function openPostgresMemoryStore(
  options: OpenPostgresMemoryStoreOptions,
): Promise<PostgresMemoryStore> {
  if ((options.url === undefined) === (options.pglite === undefined)) {
    throw new ConfigurationError(
      "Team memory on a database needs exactly one of `url` (a server) and `pglite` (a data dir).",
      {
        setting: "url",
      },
    );
  }
  const client = await createSqlClient(
    options.url !== undefined ? { url: options.url } : { pglite: options.pglite as string },
  );
  try {
    return await createPostgresMemoryStore({
      client,
      namespaces: [options.namespace],
      actor: options.actor,
      ownsClient: true,
      ...(options.secretScanner === undefined ? {} : { secretScanner: options.secretScanner }),
    });
  } catch (error) {
    await client.close();
    throw error;
  }
}
