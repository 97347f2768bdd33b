import { createSqlClient } from "@unforget/postgres";
import { describeTaskBackendContract, sampleTaskRecord } from "@unforget/tasks/testing";
import { createFaultProxy } from "@unforget/testing/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("an unreachable server", () => {
  it("gives StoreUnavailableError, naming where it looked", async () => {
    const client = await createSqlClient({
      url: "postgres://nobody@127.0.0.1:9/tasks",
      retryDeadlineMs: 500,
    });
    const error = await createPostgresTaskBackend({ client }).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ code: "store_unavailable" });
    expect((error as Error).message).toContain("127.0.0.1:9");
    await client.close();
  });
});

describe.skipIf(server === undefined)("an update whose COMMIT reply was lost", () => {
  it("is recognised by its write id when the transaction is retried, not reported as a conflict", async () => {
    const database = await openServerDatabase();
    const target = new URL(database!.url!);
    const proxy = await createFaultProxy({ host: target.hostname, port: Number(target.port) });
    target.hostname = proxy.host;
    target.port = String(proxy.port);
    const client = await createSqlClient({ url: target.toString() });
    const backend = await createPostgresTaskBackend({ client });
    try {
      const record = sampleTaskRecord();
      await backend.store.create(record);
      const cut = proxy.cutAfterCommit();
      const updated = await backend.store.update(record.id, 1, { ...record, result: "written once" });
      await cut;
      expect(updated).toMatchObject({ version: 2, result: "written once" });
      expect(await backend.store.get(record.id)).toMatchObject({ version: 2, result: "written once" });
    } finally {
      await backend.close();
      await client.close();
      await proxy.close();
      await database!.drop();
    }
  });
});
