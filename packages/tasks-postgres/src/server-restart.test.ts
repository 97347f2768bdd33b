import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { createTaskManager, type TaskManager, type TaskNotification } from "@unforget/tasks";
import {
  createPrivatePgServer,
  type PrivatePgServer,
  pgServerFromEnvironment,
} from "@unforget/testing/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killChildren, startChild } from "./__fixtures__/child-processes.ts";
import { createPostgresTaskBackend, type PostgresTaskBackend } from "./postgres-task-backend.ts";

const LEASE_MS = 3_000;
// A cluster of its own: a restart must not disturb the other test files that share the run's server.
const configured = pgServerFromEnvironment() !== undefined;

describe.skipIf(!configured)("a server restart", () => {
  let server: PrivatePgServer;
  let folder: string;
  let client: SqlClient;
  let backend: PostgresTaskBackend;
  let manager: TaskManager;

  beforeAll(async () => {
    server = await createPrivatePgServer();
    folder = await mkdtemp(join(tmpdir(), "tasks-restart-"));
    client = await createSqlClient({ url: server.url });
    backend = await createPostgresTaskBackend({ client, leaseMs: LEASE_MS });
    manager = await createTaskManager({
      backend,
      sessionId: "agent",
      pollMs: 100,
      stall: { intervalMs: 100 },
    });
  }, 120_000);
  afterAll(async () => {
    killChildren();
    await manager?.close().catch(() => undefined);
    await backend?.close().catch(() => undefined);
    await client?.close().catch(() => undefined);
    await server?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("mid-run (-m immediate): no task is lost and none finishes twice", async () => {
    for (let index = 0; index < 3; index++) {
      const worker = startChild("./worker-process.mjs", [
        server.url,
        await mkdtemp(join(folder, "worker-")),
        String(LEASE_MS),
        "4",
      ]);
      await worker.next<{ ready: boolean }>();
    }
    const ids = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        manager.start({ type: "local_bash", command: `echo task-${index}; sleep 0.${(index % 5) + 1}` }),
      ),
    );
    await sleep(500);
    await server.restart({ mode: "immediate" });

    const notifications: TaskNotification[] = [];
    const until = Date.now() + 120_000;
    for (;;) {
      notifications.push(...(await manager.takeNotifications().catch(() => [])));
      const ended = new Set(notifications.map((notification) => notification.taskId));
      if (ids.every((id) => ended.has(id)) || Date.now() > until) break;
      await sleep(100);
    }
    await sleep(1_000);
    notifications.push(...(await manager.takeNotifications()));
    for (const id of ids) {
      const mine = notifications.filter((notification) => notification.taskId === id);
      if (mine.length !== 1) {
        const job = await client.query(
          "SELECT state, retry_count, started_on, output FROM pgboss.job WHERE data->>'taskId' = $1",
          [id],
        );
        console.log(JSON.stringify({ record: await backend.store.get(id), job: job.rows, mine }));
      }
      expect(mine.map((notification) => notification.kind)).toEqual(["finished"]);
      const info = await manager.get(id);
      expect(info.status).toBe("completed");
      // A task that was running at the restart may have run again; either way its latest output is whole.
      const output = (await manager.readOutput(id)).data;
      if (output !== `task-${ids.indexOf(id)}\n`) {
        const rows = await client.query(
          "SELECT attempt, byte_offset, length(bytes) FROM unforget_task_output WHERE task_id = $1",
          [id],
        );
        console.log(JSON.stringify({ info, rows: rows.rows, record: await backend.store.get(id) }));
      }
      expect(output).toBe(`task-${ids.indexOf(id)}\n`);
    }
  });
});
