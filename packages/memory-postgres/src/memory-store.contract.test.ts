import { describeMemoryStoreContract } from "@unforget/memory/testing";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { afterAll } from "vitest";
import { freshNamespace, server, usePGlite, useServerDatabase } from "./__fixtures__/stores.ts";
import { createPostgresMemoryStore, type PostgresMemoryStore } from "./postgres-memory-store.ts";

const pglite = usePGlite();

describeMemoryStoreContract<PostgresMemoryStore>({
  name: "PostgreSQL store on PGlite",
  createStore: () =>
    createPostgresMemoryStore({ client: pglite(), namespaces: [freshNamespace()], actor: "agent:contract" }),
  // PGlite is one connection in one process: a second client is a second store on it.
  openSecondClient: (store) =>
    createPostgresMemoryStore({ client: pglite(), namespaces: [store.namespace], actor: "agent:second" }),
  propertyRuns: 8,
});

if (server) {
  const database = useServerDatabase();
  const others: SqlClient[] = [];
  afterAll(async () => {
    for (const client of others) await client.close();
  });
  describeMemoryStoreContract<PostgresMemoryStore>({
    name: "PostgreSQL store on a server",
    createStore: () =>
      createPostgresMemoryStore({
        client: database().client,
        namespaces: [freshNamespace()],
        actor: "agent:contract",
      }),
    // Another pool (another size is another pool), as another process would have.
    openSecondClient: async (store) => {
      const client = await createSqlClient({ url: database().url, poolSize: 2 + others.length });
      others.push(client);
      return createPostgresMemoryStore({ client, namespaces: [store.namespace], actor: "agent:second" });
    },
    propertyRuns: 8,
  });
}
