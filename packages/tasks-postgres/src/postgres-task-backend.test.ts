import { describeTaskBackendContract } from "@unforget/tasks/testing";
import { afterAll, beforeAll, describe } from "vitest";
import { openPglite, openServerDatabase, type TestDatabase } from "./__fixtures__/databases.ts";
import { createPostgresTaskBackend, type PostgresTaskBackend } from "./postgres-task-backend.ts";

const server = await openServerDatabase();

for (const open of [openPglite, ...(server === undefined ? [] : [async () => server])]) {
  describe("PostgreSQL task backend", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await open();
    });
    afterAll(async () => {
      await database.drop();
    });

    describeTaskBackendContract({
      name: open === openPglite ? "PGlite with pg-boss" : "PostgreSQL server with pg-boss",
      propertyRuns: 10,
      async setup({ leaseMs }) {
        const backends: PostgresTaskBackend[] = [];
        const openBackend = async () => {
          const backend = await createPostgresTaskBackend({ client: await database.open(), leaseMs });
          backends.push(backend);
          return backend;
        };
        const backend = await openBackend();
        await database.reset();
        return {
          backend,
          openPeer: openBackend,
          async appendOutput(id, text) {
            await database.client.query(
              `INSERT INTO unforget_task_output (task_id, attempt, byte_offset, bytes)
               SELECT $1, attempt, COALESCE((SELECT MAX(byte_offset + length(bytes)) FROM unforget_task_output
                 WHERE task_id = $1), 0), $2 FROM unforget_task WHERE id = $1`,
              [id, Buffer.from(text)],
            );
          },
          async teardown() {
            for (const opened of backends) await opened.close();
          },
        };
      },
    });
  });
}
