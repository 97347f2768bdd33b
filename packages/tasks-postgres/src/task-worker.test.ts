import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createTaskManager,
  PORTABLE_TASK_TYPES,
  type TaskManager,
  type TaskNotification,
  TaskNotPortableError,
} from "@unforget/tasks";
import { describeTaskManagerContract } from "@unforget/tasks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPglite, openServerDatabase, type TestDatabase } from "./__fixtures__/databases.ts";
import { createPostgresTaskBackend, type PostgresTaskBackend } from "./postgres-task-backend.ts";
import { createTaskWorker, type TaskWorker } from "./task-worker.ts";

const server = await openServerDatabase();
// One PGlite for the whole file: opening one takes seconds (WebAssembly), and each suite resets its tables.
const pglite = await openPglite();
afterAll(async () => {
  await pglite.drop();
});
const QUICK = { pollMs: 50, stall: { intervalMs: 50, quietMs: 300 }, graceMs: 300 };

for (const database of [pglite, ...(server === undefined ? [] : [server])]) {
  describe("tasks on PostgreSQL with a worker", () => {
    if (database === server) {
      afterAll(async () => {
        await database.drop();
      });
    }

    describeTaskManagerContract({
      name:
        database === pglite
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

describe("a worker on PGlite", () => {
  const database: TestDatabase = pglite;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tasks-worker-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A manager and a worker of `types` on a fresh schema; `run` gets them, and everything is closed after. */
  async function withWorker(
    options: { outputLimitBytes?: number; allow?: string[]; types?: typeof PORTABLE_TASK_TYPES },
    run: (manager: TaskManager) => Promise<void>,
  ) {
    await database.reset();
    const backend = await createPostgresTaskBackend({
      client: database.client,
      secretScanner: {
        // A stand-in for @unforget/memory's scanner: one rule, for the refusal path.
        scan: async (text) =>
          /sk_live_[0-9a-zA-Z]{24}/.test(text) ? [{ rule: "stripe-secret-key", message: "sk_live_…" }] : [],
      },
    });
    const manager = await createTaskManager({ backend, sessionId: "s", noWorkerMs: 1, ...QUICK });
    const worker = await createTaskWorker({
      client: database.client,
      dir,
      types: options.types ?? PORTABLE_TASK_TYPES,
      outputLimitBytes: options.outputLimitBytes,
      environment: { allow: options.allow ?? [] },
      ...QUICK,
    });
    try {
      await run(manager);
    } finally {
      await worker.close();
      await manager.close();
      await backend.close();
    }
  }

  it("refuses specs with a secret or with code, and stores nothing", async () => {
    await withWorker({}, async (manager) => {
      await expect(
        manager.start({
          type: "local_bash",
          command: "deploy",
          env: { STRIPE: `sk_live_${"a1B2".repeat(6)}` },
        }),
      ).rejects.toMatchObject({ code: "task_invalid_input", field: "env.STRIPE" });
      await expect(
        manager.start({ type: "local_agent", description: "x", run: async () => "y" }),
      ).rejects.toBeInstanceOf(TaskNotPortableError);
      await expect(
        manager.start({ type: "local_bash", command: `echo ${"x".repeat(70_000)}` }),
      ).rejects.toMatchObject({ code: "task_invalid_input", field: "spec" });
      await expect(
        manager.start({ type: "local_bash", command: "sleep 1", timeoutMs: 24 * 3_600_000 }),
      ).rejects.toMatchObject({ code: "task_invalid_input", field: "timeoutMs" });
      expect(await manager.list()).toEqual([]);
    });
  });

  it("passes the environment names a spec asks for only when the worker allows them", async () => {
    process.env.UNFORGET_TEST_TOKEN = "token-value";
    process.env.UNFORGET_TEST_HIDDEN = "hidden-value";
    try {
      await withWorker({ allow: ["UNFORGET_TEST_TOKEN"] }, async (manager) => {
        const allowed = await manager.start({
          type: "local_bash",
          command: 'echo "$UNFORGET_TEST_TOKEN/[$UNFORGET_TEST_HIDDEN]"',
          envFrom: ["UNFORGET_TEST_TOKEN"],
        });
        expect(await manager.wait(allowed, { timeoutMs: 60_000 })).toMatchObject({ status: "completed" });
        expect((await manager.readOutput(allowed)).data).toBe("token-value/[]\n");
        const refused = await manager.start({
          type: "local_bash",
          command: "echo $UNFORGET_TEST_HIDDEN",
          envFrom: ["UNFORGET_TEST_HIDDEN"],
        });
        expect(await manager.wait(refused, { timeoutMs: 60_000 })).toMatchObject({
          status: "failed",
          endReason: "error",
          error: expect.stringMatching(/UNFORGET_TEST_HIDDEN is not in this worker's allow-list/),
        });
      });
    } finally {
      delete process.env.UNFORGET_TEST_TOKEN;
      delete process.env.UNFORGET_TEST_HIDDEN;
    }
  });

  it("stops a task whose output passes the limit, keeping everything up to it", async () => {
    await withWorker({ outputLimitBytes: 10_000 }, async (manager) => {
      const id = await manager.start({
        type: "local_bash",
        command: "for i in $(seq 1 2000); do echo 0123456789; done; sleep 30",
      });
      const info = await manager.wait(id, { timeoutMs: 60_000 });
      expect(info).toMatchObject({ status: "failed", endReason: "output_limit", outputBytes: 10_000 });
      expect(info.error).toMatch(/passed the limit of 10000 bytes/);
      const { match } = await waitFor(manager, (n) => n.taskId === id);
      expect(match).toMatchObject({ kind: "failed", reason: "output_limit" });
    });
  });

  it("takes each notice from its task's record once; the event log holds the same, in commit order", async () => {
    await withWorker({}, async (manager) => {
      const ids = [
        await manager.start({ type: "local_bash", command: "echo one" }),
        await manager.start({ type: "local_bash", command: "echo two >&2; exit 3" }),
        await manager.start({ type: "local_bash", command: "echo three" }),
      ];
      const taken: TaskNotification[] = [];
      while (!ids.every((id) => taken.some((notice) => notice.taskId === id))) {
        taken.push(...(await manager.takeNotifications()));
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Taken: gone from the records, so no manager of the session gets them again.
      expect(await manager.takeNotifications()).toEqual([]);
      for (const id of ids) expect((await manager.get(id)).status).not.toBe("running");
      // The log has every notice once, committed with the state change that raised it: what a reader following
      // it with a cursor below pg_snapshot_xmin (as team memory's change feed does) would get.
      const { rows } = await database.client.query<{ payload: TaskNotification }>(
        `SELECT payload FROM unforget_task_event
         WHERE xact_id < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY xact_id, id`,
      );
      const key = (notice: TaskNotification) => JSON.stringify(notice);
      expect(rows.map((row) => key(row.payload)).sort()).toEqual(taken.map(key).sort());
    });
  });

  it("a task whose type no live worker runs notifies no_worker", async () => {
    const bashOnly = PORTABLE_TASK_TYPES.filter((type) => type.type === "local_bash");
    await withWorker({ types: bashOnly }, async (manager) => {
      const id = await manager.start({ type: "monitor", command: "sleep 60", check: "true" });
      const { match } = await waitFor(manager, (n) => n.taskId === id);
      expect(match).toMatchObject({ kind: "no_worker", type: "monitor" });
      await manager.stop(id);
    });
  });
});

async function waitFor(manager: TaskManager, matches: (notification: TaskNotification) => boolean) {
  const all: TaskNotification[] = [];
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    all.push(...(await manager.takeNotifications()));
    const match = all.find(matches);
    if (match !== undefined) return { match, all };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no matching notification; got ${JSON.stringify(all)}`);
}
