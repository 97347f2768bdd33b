import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { createTaskManager, type TaskManager, type TaskNotification } from "@unforget/tasks";
import { createFaultProxy } from "@unforget/testing/postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ChildHandle,
  isProcessGroupAlive,
  killChildren,
  startChild,
  taskGroups,
} from "./__fixtures__/child-processes.ts";
import { openServerDatabase, type TestDatabase } from "./__fixtures__/databases.ts";
import { createPostgresTaskBackend, type PostgresTaskBackend } from "./postgres-task-backend.ts";

/** Short, so that a lost worker is noticed within seconds; long enough for a loaded machine to renew. */
const LEASE_MS = 2_000;
const server = await openServerDatabase();

async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error("condition not reached in time");
    await sleep(50);
  }
}

describe.skipIf(server === undefined)("three worker processes on one server", () => {
  let database: TestDatabase;
  let client: SqlClient;
  let backend: PostgresTaskBackend;
  let manager: TaskManager;
  let folder: string;
  let workers: Array<ChildHandle & { id: string; dir: string }>;
  const notifications: TaskNotification[] = [];

  const startWorker = async (url: string, concurrency = 4, dir?: string) => {
    const workerDir = dir ?? (await mkdtemp(join(folder, "worker-")));
    const worker = startChild("./worker-process.mjs", [
      url,
      workerDir,
      String(LEASE_MS),
      String(concurrency),
    ]);
    const ready = await worker.next<{ id: string; pid: number }>();
    return Object.assign(worker, { id: ready.id, dir: workerDir });
  };
  /** Every byte of one attempt's output, as readers see it. */
  const outputOf = async (id: string, attempt: number) => {
    let data = "";
    for (let offset = 0; ; ) {
      const chunk = await manager.readOutput(id, offset, { attempt });
      data += chunk.data;
      offset = chunk.nextOffset;
      if (chunk.done) return data;
    }
  };
  const collect = async () => {
    notifications.push(...(await manager.takeNotifications()));
    return notifications;
  };
  /** The record as the store has it (owner, attempt, process). */
  const recordOf = async (id: string) => (await backend.store.get(id))!;

  beforeAll(async () => {
    database = server!;
    folder = await mkdtemp(join(tmpdir(), "tasks-multi-"));
    client = await createSqlClient({ url: database.url! });
    backend = await createPostgresTaskBackend({ client, leaseMs: LEASE_MS });
    manager = await createTaskManager({
      backend,
      sessionId: "agent",
      pollMs: 100,
      stall: { intervalMs: 100 },
    });
    workers = [];
    for (let index = 0; index < 3; index++) workers.push(await startWorker(database.url!));
  });
  afterEach(async () => {
    // Workers a test paused or killed are replaced, so that every test starts with three live ones.
    for (const [index, worker] of workers.entries()) {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
        workers[index] = await startWorker(database.url!);
      }
    }
  });
  afterAll(async () => {
    killChildren();
    await manager.close();
    await backend.close();
    await client.close();
    await database.drop();
    await rm(folder, { recursive: true, force: true });
  });

  it("kill -9 mid-task: 60 tasks complete once each; the killed one runs again elsewhere, its first attempt readable", async () => {
    const long = await manager.start({
      type: "local_bash",
      command: 'for i in $(seq 1 200); do echo "line $i"; sleep 0.05; done',
    });
    const running = await eventually(async () => {
      const record = await recordOf(long);
      return record.process !== undefined && (await manager.get(long)).outputBytes > 0 ? record : undefined;
    });
    taskGroups.add(running.process!.pid);
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        manager.start({ type: "local_bash", command: `echo task-${index}; sleep 0.${index % 3}` }),
      ),
    );
    const victim = workers.find((worker) => worker.child.pid === running.owner!.pid)!;
    victim.child.kill("SIGKILL");
    await victim.exited;
    // The killed worker's command outlives it on this machine; a machine that died would take it along.
    try {
      process.kill(-running.process!.pid, "SIGKILL");
    } catch {
      // it had ended already
    }

    const all = [long, ...ids];
    await eventually(async () => {
      const seen = new Set((await collect()).map((notification) => notification.taskId));
      return all.every((id) => seen.has(id));
    }).catch(async (error: unknown) => {
      // What was left behind, for whoever reads the failure.
      const seen = new Set(notifications.map((notification) => notification.taskId));
      for (const id of all.filter((id) => !seen.has(id))) console.log(JSON.stringify(await recordOf(id)));
      throw error;
    });
    await sleep(500);
    await collect();
    for (const id of all) {
      const mine = notifications.filter((notification) => notification.taskId === id);
      expect(mine.map((notification) => notification.kind)).toEqual(["finished"]);
    }
    expect(await manager.get(long)).toMatchObject({ status: "completed", attempt: 2 });
    const expected = Array.from({ length: 200 }, (_, index) => `line ${index + 1}\n`).join("");
    let latest = "";
    for (let offset = 0; ; ) {
      const chunk = await manager.readOutput(long, offset, { maxBytes: 64 });
      latest += chunk.data;
      offset = chunk.nextOffset;
      if (chunk.done) break;
    }
    expect(latest).toBe(expected);
    // The first attempt's output stays readable up to its last committed offset: a prefix of the full run.
    const first = await manager.readOutput(long, 0, { attempt: 1 });
    expect(first.done).toBe(true);
    expect(first.data.length).toBeGreaterThan(0);
    expect(expected.startsWith(first.data)).toBe(true);
  });

  it("kill -9 while its command runs on: a worker restarted on the same folder ships the rest of that attempt's output", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: 'for i in $(seq 1 80); do echo "line $i"; sleep 0.05; done',
    });
    const first = await eventually(async () => {
      const record = await recordOf(id);
      return record.process !== undefined && (await manager.get(id)).outputBytes > 0 ? record : undefined;
    });
    taskGroups.add(first.process!.pid);
    const index = workers.findIndex((worker) => worker.child.pid === first.owner!.pid);
    const victim = workers[index]!;
    victim.child.kill("SIGKILL");
    await victim.exited;
    // The machine stays up: the command runs on to its end, and what it writes now reaches only the local file.
    await eventually(async () => !isProcessGroupAlive(first.process!.pid));
    const expected = Array.from({ length: 80 }, (_, line) => `line ${line + 1}\n`).join("");
    await eventually(async () => ((await recordOf(id)).attempt === 2 ? true : undefined));
    const shipped = await outputOf(id, 1);
    expect(expected.startsWith(shipped) && shipped.length < expected.length).toBe(true);
    // The worker comes back on its folder (a restart by the service manager): the rest of attempt 1 follows.
    workers[index] = await startWorker(database.url!, 4, victim.dir);
    await eventually(async () => ((await outputOf(id, 1)) === expected ? true : undefined), 30_000);
    // The later attempt keeps its own output, and the task ends once.
    await eventually(async () => ((await manager.get(id)).status === "completed" ? true : undefined));
    expect(await outputOf(id, 2)).toBe(expected);
  });

  it("SIGSTOP past the lease, then SIGCONT: the paused worker's child is killed and its writes are refused", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: 'for i in $(seq 1 40000); do echo "tick $i"; sleep 0.05; done',
    });
    const first = await eventually(async () => {
      const record = await recordOf(id);
      return record.process !== undefined && (await manager.get(id)).outputBytes > 0 ? record : undefined;
    });
    taskGroups.add(first.process!.pid);
    const paused = workers.find((worker) => worker.child.pid === first.owner!.pid)!;
    paused.child.kill("SIGSTOP");
    const second = await eventually(async () => {
      const record = await recordOf(id);
      return record.attempt === 2 && record.process !== undefined ? record : undefined;
    });
    taskGroups.add(second.process!.pid);
    const committed = (await backend.output.stat(id, 1)).size;
    // While paused its command ran on, writing its local file; none of that may reach the store.
    expect(isProcessGroupAlive(first.process!.pid)).toBe(true);
    paused.child.kill("SIGCONT");
    await eventually(async () => !isProcessGroupAlive(first.process!.pid));
    await sleep(3 * 1_000);
    expect((await backend.output.stat(id, 1)).size).toBe(committed);
    expect(await recordOf(id)).toMatchObject({ status: "running", attempt: 2 });
    expect((await recordOf(id)).owner?.pid).not.toBe(paused.child.pid);
    await manager.stop(id);
  });

  it("a cut to the server longer than the lease: the same, through a proxy", async () => {
    const proxy = await createFaultProxy({
      host: new URL(database.url!).hostname,
      port: Number(new URL(database.url!).port),
    });
    const url = new URL(database.url!);
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    const cutOff = await startWorker(url.toString(), 1);
    // The other workers are paused while the task is queued, so that the one behind the proxy claims it.
    for (const worker of workers) worker.child.kill("SIGSTOP");
    const id = await manager.start({
      type: "local_bash",
      command: 'for i in $(seq 1 40000); do echo "tick $i"; sleep 0.05; done',
    });
    const first = await eventually(async () => {
      const record = await recordOf(id);
      return record.process !== undefined ? record : undefined;
    });
    for (const worker of workers) worker.child.kill("SIGCONT");
    taskGroups.add(first.process!.pid);
    expect(first.owner!.pid).toBe(cutOff.child.pid);
    const blackhole = proxy.blackhole(3 * LEASE_MS);
    // Unable to renew for longer than the lease, the worker ends the command itself.
    await eventually(async () => !isProcessGroupAlive(first.process!.pid));
    await blackhole;
    const second = await eventually(async () => {
      const record = await recordOf(id);
      return record.attempt === 2 ? record : undefined;
    });
    expect(second.owner?.pid).not.toBe(cutOff.child.pid);
    await manager.stop(id);
    cutOff.child.kill("SIGKILL");
    await proxy.close();
  });

  it("an agent in another process gets each finished, failed and stalled notice once, across a reconnect; a prompt is answered from this one", async () => {
    const proxy = await createFaultProxy({
      host: new URL(database.url!).hostname,
      port: Number(new URL(database.url!).port),
    });
    const url = new URL(database.url!);
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    const agent = startChild("./agent-process.mjs", [url.toString(), String(LEASE_MS), "other-agent"]);
    await agent.next<{ ready: boolean }>();
    const send = (message: unknown) => agent.child.stdin!.write(`${JSON.stringify(message)}\n`);
    send({ label: "ok", start: { type: "local_bash", command: "sleep 1; echo ok" } });
    send({ label: "bad", start: { type: "local_bash", command: "sleep 1; echo broken >&2; exit 4" } });
    send({
      label: "ask",
      start: { type: "local_bash", command: "printf 'Continue? [y/N] '; read a; echo \"a=$a\"" },
    });
    const started = new Map<string, string>();
    for (let index = 0; index < 3; index++) {
      const { started: id, label } = await agent.next<{ started: string; label: string }>(
        (line) => "started" in line,
      );
      started.set(label, id);
    }
    // The agent's connections drop; its pool reconnects and it catches up.
    proxy.cut();
    const received: TaskNotification[] = [];
    const nextNotice = async () => {
      const { notification } = await agent.next<{ notification: TaskNotification }>(
        (line) => "notification" in line,
      );
      received.push(notification);
      return notification;
    };
    while (!received.some((notification) => notification.kind === "stalled")) await nextNotice();
    // The prompt is answered from this process, through a command to the worker that holds its stdin.
    await manager.write(started.get("ask")!, "y\n");
    const ended = (label: string, kind: string) =>
      received.some(
        (notification) => notification.taskId === started.get(label) && notification.kind === kind,
      );
    while (!ended("ok", "finished") || !ended("bad", "failed") || !ended("ask", "finished"))
      await nextNotice();
    // Anything sent twice would arrive within the agent's next rounds of taking.
    await sleep(1_000);
    send({ exit: true });
    for (;;) {
      const line = await agent.next<{ notification?: TaskNotification; closed?: boolean }>();
      if (line.notification !== undefined) received.push(line.notification);
      if (line.closed) break;
    }
    await agent.exited;
    await proxy.close();
    const kinds = (label: string) =>
      received.filter((notification) => notification.taskId === started.get(label)).map((n) => n.kind);
    expect(kinds("ok")).toEqual(["finished"]);
    expect(kinds("bad")).toEqual(["failed"]);
    expect(kinds("ask")).toEqual(["stalled", "finished"]);
    let answered = "";
    for (let offset = 0; ; ) {
      const chunk = await manager.readOutput(started.get("ask")!, offset);
      answered += chunk.data;
      offset = chunk.nextOffset;
      if (chunk.done) break;
    }
    expect(answered).toBe("Continue? [y/N] a=y\n");
  });
});
