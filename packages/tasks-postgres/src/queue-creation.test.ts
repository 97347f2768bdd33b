import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { PORTABLE_TASK_TYPES } from "@unforget/tasks";
import { pgServerFromEnvironment } from "@unforget/testing/postgres";
import { afterAll, describe, expect, it } from "vitest";
import { queueName } from "./task-tables.ts";
import { createTaskWorker, type TaskWorker } from "./task-worker.ts";

const server = pgServerFromEnvironment();

describe.skipIf(server === undefined)("workers starting together on a new database", () => {
  const clients: SqlClient[] = [];
  const workers: TaskWorker[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const worker of workers) await worker.close();
    for (const client of clients) await client.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it("create their queues without a deadlock on the server", async () => {
    const database = await server!.createDatabase();
    cleanups.push(() => database.drop());
    const folder = await mkdtemp(join(tmpdir(), "tasks-queues-"));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    // Each worker on a pool of its own, as if each were a process of its own; all start at once.
    for (let index = 0; index < 6; index++) {
      clients.push(await createSqlClient({ url: database.url, poolSize: 2 + index }));
    }
    workers.push(
      ...(await Promise.all(
        clients.map((client, index) =>
          createTaskWorker({
            client,
            dir: join(folder, `worker-${index}`),
            types: PORTABLE_TASK_TYPES,
            leaseMs: 5_000,
            onError: () => undefined,
          }),
        ),
      )),
    );
    const [observer] = clients;
    const { rows: queues } = await observer!.query<{ name: string }>(
      "SELECT name FROM pgboss.queue ORDER BY name",
    );
    expect(queues.map((queue) => queue.name)).toEqual(
      PORTABLE_TASK_TYPES.map((type) => queueName(type.type)).sort(),
    );
    // The server counts every deadlock it broke (the client retried those, so the workers did start).
    // Its statistics reach the view within a second of the end of the transaction that saw them.
    await sleep(2_000);
    const { rows } = await observer!.query<{ deadlocks: string }>(
      "SELECT pg_stat_clear_snapshot(), (SELECT deadlocks::text FROM pg_stat_database WHERE datname = current_database()) AS deadlocks",
    );
    expect(Number(rows[0]?.deadlocks)).toBe(0);
  });
});
