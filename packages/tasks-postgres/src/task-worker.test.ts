import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTaskManager, PORTABLE_TASK_TYPES, type TaskManager } from "@unforget/tasks";
import { describeTaskManagerContract } from "@unforget/tasks/testing";
import { afterAll, beforeAll, describe } from "vitest";
import { openPglite, openServerDatabase, type TestDatabase } from "./__fixtures__/databases.ts";
import { createPostgresTaskBackend, type PostgresTaskBackend } from "./postgres-task-backend.ts";
import { createTaskWorker, type TaskWorker } from "./task-worker.ts";

const server = await openServerDatabase();
const QUICK = { pollMs: 50, stall: { intervalMs: 50, quietMs: 300 }, graceMs: 300 };

for (const open of [openPglite, ...(server === undefined ? [] : [async () => server])]) {
  describe("tasks on PostgreSQL with a worker", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await open();
    });
    afterAll(async () => {
      await database.drop();
    });

    describeTaskManagerContract({
      name:
        open === openPglite
          ? "PGlite with pg-boss and a worker"
          : "PostgreSQL server with pg-boss and a worker",
      async setup() {
        await database.reset();
        const dir = await mkdtemp(join(tmpdir(), "tasks-worker-"));
        const backends: PostgresTaskBackend[] = [];
        const managers: TaskManager[] = [];
        const openManager = async (sessionId: string) => {
          const backend = await createPostgresTaskBackend({ client: await database.open() });
          backends.push(backend);
          const manager = await createTaskManager({ backend, sessionId, ...QUICK });
          managers.push(manager);
          return manager;
        };
        const worker: TaskWorker = await createTaskWorker({
          client: await database.open(),
          dir,
          types: PORTABLE_TASK_TYPES,
          concurrency: 2,
          ...QUICK,
        });
        return {
          manager: await openManager("agent"),
          peer: await openManager("peer"),
          async teardown() {
            await worker.close();
            for (const manager of managers) await manager.close();
            for (const backend of backends) await backend.close();
            await rm(dir, { recursive: true, force: true });
          },
        };
      },
    });
  });
}
