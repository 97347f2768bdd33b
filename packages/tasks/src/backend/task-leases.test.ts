import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killChildManagers, startChildManager } from "../__fixtures__/child-manager.ts";
import {
  eventually,
  readAllOutput,
  temporaryDirectory,
  waitForNotification,
} from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";
import { TaskStoreError } from "../task/task-errors.ts";
import { outputFile, taskDirectory } from "../task/task-paths.ts";
import { createFileTaskBackend } from "./file-task-backend.ts";
import { createFileTaskLeases } from "./file-task-leases.ts";
import { createFileTaskStateStore } from "./file-task-state-store.ts";

/** Short enough for a test, long enough that a loaded machine still renews in time (every third of it). */
const LEASE_MS = 900;

let dir: string;
let cleanup: () => Promise<void>;
const managers: TaskManager[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-lease-"));
});
afterEach(async () => {
  killChildManagers();
  for (const manager of managers.splice(0)) await manager.close();
  await cleanup();
});

async function openManager(): Promise<TaskManager> {
  const manager = await createTaskManager({
    dir,
    leaseMs: LEASE_MS,
    graceMs: 300,
    pollMs: 50,
    stall: { intervalMs: 50, quietMs: 60_000 },
  });
  managers.push(manager);
  return manager;
}

const outputSize = async (id: string) =>
  (await stat(outputFile(taskDirectory(dir, id))).catch(() => undefined))?.size ?? 0;

describe("ownership is a lease with a heartbeat", () => {
  it("a paused manager's process task is adopted once its lease lapses, and left to the adopter when it wakes", async () => {
    const child = startChildManager(
      dir,
      "hold",
      `echo start; while [ ! -e '${join(dir, "go")}' ]; do sleep 0.05; done; echo end`,
      LEASE_MS,
    );
    const { id } = await child.next<{ id: string }>();
    const manager = await openManager();
    expect((await manager.get(id)).watchedBy).toBe("another manager");

    // A live process that stops renewing (paused, swapped out, cut off) loses its tasks: no pid check saves it.
    child.child.kill("SIGSTOP");
    await eventually(async () => (await manager.get(id)).watchedBy === "this manager");
    child.child.kill("SIGCONT");

    await writeFile(join(dir, "go"), "");
    const { match, all } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "finished", exitCode: 0 });
    expect(all).toHaveLength(1);
    const record = await createFileTaskStateStore({ dir }).get(id);
    expect(record?.owner?.pid).toBe(process.pid);
    expect((await manager.readOutput(id)).data).toBe("start\nend\n");
  });

  it("a paused manager's in-process job is recorded as lost, and the job writes nothing once its manager wakes", async () => {
    const child = startChildManager(dir, "agent", "", LEASE_MS);
    const { id } = await child.next<{ id: string }>();
    await eventually(async () => (await outputSize(id)) > 0);
    const manager = await openManager();

    child.child.kill("SIGSTOP");
    await eventually(async () => (await manager.get(id)).status === "failed");
    expect(await manager.get(id)).toMatchObject({ endReason: "lost" });
    const sizeWhenLost = await outputSize(id);
    child.child.kill("SIGCONT");

    // The woken manager's writer is fenced until its heartbeat finds the task gone, then the job is aborted. A
    // write that had passed the fence when the process was stopped may still land (one line: a file store cannot
    // refuse it); nothing after it does. Several heartbeats later (a third of the lease each), no more growth.
    await sleep(LEASE_MS);
    const sizeAfterWake = await outputSize(id);
    expect(sizeAfterWake - sizeWhenLost).toBeLessThanOrEqual("line 9999\n".length);
    await sleep(3 * LEASE_MS);
    expect(await outputSize(id)).toBe(sizeAfterWake);
    expect(await manager.takeNotifications()).toMatchObject([{ taskId: id, kind: "failed", reason: "lost" }]);
  });

  it("a closed manager releases its lease: its released process task is adopted at once", async () => {
    const first = await openManager();
    // The command waits for a file, so it is still running when the second manager opens, however slow the machine.
    const gate = join(dir, "gate");
    const id = await first.start({
      type: "local_bash",
      command: `while [ ! -f '${gate}' ]; do sleep 0.05; done; echo late`,
    });
    await first.close();
    const second = await openManager();
    expect((await second.get(id)).watchedBy).toBe("this manager");
    await writeFile(gate, "");
    const { match } = await waitForNotification(second, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "finished" });
  });
});

describe("a lease file that cannot be read", () => {
  const owner = { managerId: "m-elsewhere", pid: 1, startTime: "0", hostname: "another-host.invalid" };

  it("absent: not held; renewed: held; unreadable or not a lease: a TaskStoreError, never taken as lapsed", async () => {
    const leases = createFileTaskLeases(dir, 60_000);
    expect(await leases.holds(owner)).toBe(false);
    await leases.renew(owner, []);
    expect(await leases.holds(owner)).toBe(true);
    const file = join(dir, ".leases", "m-elsewhere.json");
    await writeFile(file, "{ half a le");
    await expect(leases.holds(owner)).rejects.toThrow(TaskStoreError);
    await expect(leases.holds(owner)).rejects.toThrow(/not a lease file.*Delete it/);
    // A read that fails for another reason than absence (here: a folder where the file should be).
    await rm(file);
    await mkdir(file);
    await expect(leases.holds(owner)).rejects.toThrow(/Could not read the lease .*EISDIR/);
  });
});

describe("input through another manager", () => {
  it("is taken when the task reads it and ends before the owner's acknowledgement is stored", async () => {
    const backend = createFileTaskBackend({ dir, leaseMs: LEASE_MS });
    // The owner stores its acknowledgements late (a slow disk, a loaded database): the task's end comes first.
    const owner = await createTaskManager({
      dir,
      backend: {
        ...backend,
        commands: {
          ...backend.commands,
          acknowledge: async (command, result) => {
            await sleep(400);
            await backend.commands.acknowledge(command, result);
          },
        },
      },
      graceMs: 300,
      pollMs: 50,
      stall: { intervalMs: 50, quietMs: 60_000 },
    });
    managers.push(owner);
    const peer = await openManager();
    const id = await owner.start({ type: "local_bash", command: 'read answer; echo "answer=$answer"' });
    await eventually(async () => (await peer.get(id)).watchedBy === "another manager");
    await peer.write(id, "y\n");
    const { match } = await waitForNotification(owner, (n) => n.taskId === id && n.kind === "finished");
    expect(match).toBeDefined();
    expect(await readAllOutput(peer, id)).toBe("answer=y\n");
  });
});
