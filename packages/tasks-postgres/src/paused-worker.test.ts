import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { createTaskManager, type TaskManager } from "@unforget/tasks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ChildHandle, killChildren, startChild, taskGroups } from "./__fixtures__/child-processes.ts";
import { openServerDatabase, type TestDatabase } from "./__fixtures__/databases.ts";
import { createPostgresTaskBackend, type PostgresTaskBackend } from "./postgres-task-backend.ts";

const LEASE_MS = 2_000;
/**
 * How long a task held by a worker paused at the worst moment may stay out of reach: the lease, a reconciler
 * round and a claim, with room for a loaded machine. Far below the server's own idle-in-transaction timeout
 * (60 s), which is what freed such a task before.
 */
const TAKEN_OVER_WITHIN_MS = 30_000;
const server = await openServerDatabase();

describe.skipIf(server === undefined)("a worker paused inside one of its transactions", () => {
  let database: TestDatabase;
  let client: SqlClient;
  let backend: PostgresTaskBackend;
  let manager: TaskManager;
  let folder: string;

  const startWorker = async (pauseAfter?: "renewal" | "claim") => {
    const worker = startChild(
      "./worker-process.mjs",
      [database.url!, await mkdtemp(join(folder, "worker-")), String(LEASE_MS), "1"],
      pauseAfter === undefined ? {} : { UNFORGET_PAUSE_AFTER: pauseAfter },
    );
    await worker.next<{ ready: boolean }>();
    return worker;
  };

  beforeAll(async () => {
    database = server!;
    folder = await mkdtemp(join(tmpdir(), "tasks-paused-"));
    client = await createSqlClient({ url: database.url! });
    backend = await createPostgresTaskBackend({ client, leaseMs: LEASE_MS });
    manager = await createTaskManager({
      backend,
      sessionId: "agent",
      pollMs: 100,
      stall: { intervalMs: 100 },
    });
  });
  afterEach(async () => {
    // Each test starts with no worker and no task left by the one before.
    killChildren();
    await database.reset();
  });
  afterAll(async () => {
    killChildren();
    await manager.close();
    await backend.close();
    await client.close();
    await database.drop();
    await rm(folder, { recursive: true, force: true });
  });

  /** Starts a long task while only the pausing worker runs, so that it is the one that takes it. */
  const startWhileOnlyPausingRuns = async (paused: ChildHandle, other: ChildHandle) => {
    other.child.kill("SIGSTOP");
    const id = await manager.start({
      type: "local_bash",
      command: 'for i in $(seq 1 600); do echo "tick $i"; sleep 0.05; done',
    });
    const point = await paused.next<{ pausing: string }>((line) => "pausing" in line);
    const pausedAt = Date.now();
    other.child.kill("SIGCONT");
    return { id, point: point.pausing, pausedAt };
  };

  const runningElsewhere = async (id: string, pid: number | undefined, since: number) => {
    for (;;) {
      const record = await backend.store.get(id);
      if (record?.status === "running" && record.process !== undefined && record.owner?.pid !== pid) {
        taskGroups.add(record.process.pid);
        return { record, afterMs: Date.now() - since };
      }
      if (Date.now() - since > TAKEN_OVER_WITHIN_MS) {
        throw new Error(`task ${id} still held after ${TAKEN_OVER_WITHIN_MS} ms: ${JSON.stringify(record)}`);
      }
      await sleep(100);
    }
  };

  it("paused inside its lease renewal, it holds its task no longer than its lease (plus a reconciler round)", async () => {
    const paused = await startWorker("renewal");
    const other = await startWorker();
    const { id, point, pausedAt } = await startWhileOnlyPausingRuns(paused, other);
    expect(point).toBe("renewal");
    const first = await backend.store.get(id);
    if (first?.process !== undefined) taskGroups.add(first.process.pid);
    const { record } = await runningElsewhere(id, paused.child.pid, pausedAt);
    expect(record.owner?.pid).toBe(other.child.pid);
    expect(record.attempt).toBe(2);
    await manager.stop(id);
  });

  it("paused inside its claim, the job goes back to the queue once the server ends the transaction", async () => {
    const paused = await startWorker("claim");
    const other = await startWorker();
    const { id, point, pausedAt } = await startWhileOnlyPausingRuns(paused, other);
    expect(point).toBe("claim");
    const { record } = await runningElsewhere(id, paused.child.pid, pausedAt);
    expect(record.owner?.pid).toBe(other.child.pid);
    // The paused claim never committed: the other worker's is the first attempt.
    expect(record.attempt).toBe(1);
    await manager.stop(id);
  });
});
