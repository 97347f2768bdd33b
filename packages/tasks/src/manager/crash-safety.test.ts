import { stat } from "node:fs/promises";
import { groupExists, isProcessAlive } from "@unforget/process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killChildManagers, startChildManager } from "../__fixtures__/child-manager.ts";
import {
  eventually,
  readAllOutput,
  temporaryDirectory,
  waitForNotification,
} from "../__fixtures__/task-test-kit.ts";
import { createFileTaskStateStore } from "../backend/file-task-state-store.ts";
import { outputFile, taskDirectory } from "../task/task-paths.ts";
import { createTaskManager, type TaskManager } from "./task-manager.ts";

let dir: string;
let cleanup: () => Promise<void>;
const managers: TaskManager[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-crash-"));
});
afterEach(async () => {
  killChildManagers();
  for (const manager of managers.splice(0)) await manager.close();
  await cleanup();
});

async function openManager(): Promise<TaskManager> {
  const manager = await createTaskManager({
    dir,
    graceMs: 300,
    pollMs: 50,
    stall: { intervalMs: 50, quietMs: 60_000 },
  });
  managers.push(manager);
  return manager;
}

/** Starts a manager in a child process with `command`, then kills that manager with SIGKILL. */
async function startAndKillManager(command: string, beforeKill?: (id: string) => Promise<void>) {
  const child = startChildManager(dir, "hold", command);
  const { id, pid } = await child.next<{ id: string; pid: number }>();
  await beforeKill?.(id);
  child.child.kill("SIGKILL");
  await child.exited;
  return { id, pid };
}

describe("a manager killed with SIGKILL", () => {
  it("leaves its task running; a new manager re-attaches it by pid and start time, and no output is lost", async () => {
    const { id } = await startAndKillManager(
      'for i in $(seq 1 40); do echo "line $i"; sleep 0.05; done',
      async (taskId) => {
        await eventually(
          async () =>
            ((await stat(outputFile(taskDirectory(dir, taskId))).catch(() => undefined))?.size ?? 0) > 0,
        );
      },
    );
    const record = await createFileTaskStateStore({ dir }).get(id);
    expect(record?.status).toBe("running");
    expect(isProcessAlive(record!.process!)).toBe(true);

    const manager = await openManager();
    expect(await manager.get(id)).toMatchObject({ status: "running", watchedBy: "this manager" });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "finished", exitCode: 0 });
    const expected = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join("");
    expect(await readAllOutput(manager, id)).toBe(expected);
  });

  it("a task that ended while no manager ran is recorded with its exit code, and its failure is notified", async () => {
    const { id, pid } = await startAndKillManager("echo bye; sleep 0.3; exit 7");
    await eventually(() => !groupExists(pid));
    const manager = await openManager();
    expect(await manager.get(id)).toMatchObject({ status: "failed", endReason: "exit", exitCode: 7 });
    const notifications = await manager.takeNotifications();
    expect(notifications).toMatchObject([{ taskId: id, kind: "failed", exitCode: 7, tail: "bye\n" }]);
    expect(await manager.takeNotifications()).toEqual([]);
  });

  it("a task killed while no manager watched is recorded as lost, not as finished", async () => {
    const { id, pid } = await startAndKillManager("sleep 30");
    process.kill(-pid, "SIGKILL");
    await eventually(() => !groupExists(pid));
    const manager = await openManager();
    expect(await manager.get(id)).toMatchObject({ status: "failed", endReason: "lost" });
    expect(await manager.takeNotifications()).toMatchObject([{ taskId: id, kind: "failed", reason: "lost" }]);
  });
});

describe("two managers on one directory", () => {
  it("each watches its own tasks, reads the other's, answers its prompt and stops it through commands", async () => {
    const child = startChildManager(
      dir,
      "hold",
      'echo from-a; read answer; echo "answer: $answer"; sleep 30',
    );
    const { id: foreignId } = await child.next<{ id: string }>();
    const manager = await openManager();
    const ownId = await manager.start({ type: "local_bash", command: "echo from-b" });

    expect(await manager.get(foreignId)).toMatchObject({ status: "running", watchedBy: "another manager" });
    await eventually(async () => (await manager.readOutput(foreignId)).data === "from-a\n");
    // The input goes to the manager that holds the task's stdin, which writes it and acknowledges.
    await manager.write(foreignId, "yes\n");
    await eventually(async () => (await manager.readOutput(foreignId)).data === "from-a\nanswer: yes\n");

    // Only this manager's task notifies here.
    const { all } = await waitForNotification(manager, (n) => n.taskId === ownId);
    expect(all.map((n) => n.taskId)).toEqual([ownId]);

    // Stopping the other manager's task: it receives the command, ends the group and records the end.
    const stopped = await manager.stop(foreignId);
    expect(stopped).toMatchObject({ status: "killed", endReason: "stopped" });
    child.child.kill("SIGKILL");
    await child.exited;
  });

  it("adopts the task of a manager that dies while it watches", async () => {
    const child = startChildManager(dir, "hold", "sleep 1; echo done-late");
    const { id } = await child.next<{ id: string }>();
    const manager = await openManager();
    expect((await manager.get(id)).watchedBy).toBe("another manager");
    child.child.kill("SIGKILL");
    await child.exited;
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "finished", exitCode: 0 });
    expect(await readAllOutput(manager, id)).toBe("done-late\n");
  });

  it("starting and finishing tasks at the same time never corrupts the other's records", async () => {
    const [first, second] = [await openManager(), await openManager()];
    const ids = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 === 0 ? first : second).start({
          type: "local_bash",
          command: `echo task-${i}; exit ${i % 3}`,
        }),
      ),
    );
    await Promise.all(ids.map((id, i) => (i % 2 === 0 ? first : second).wait(id, { timeoutMs: 45_000 })));
    const fromFirst = await first.takeNotifications();
    const fromSecond = await second.takeNotifications();
    expect(fromFirst.map((n) => n.taskId).sort()).toEqual(ids.filter((_, i) => i % 2 === 0).sort());
    expect(fromSecond.map((n) => n.taskId).sort()).toEqual(ids.filter((_, i) => i % 2 === 1).sort());
    const listed = await createFileTaskStateStore({ dir }).list();
    expect(listed).toHaveLength(16);
    for (const [i, id] of ids.entries()) {
      const record = listed.find((r) => r.id === id);
      expect(record).toMatchObject({
        status: i % 3 === 0 ? "completed" : "failed",
        exitCode: i % 3,
        pending: [],
      });
      expect(await readAllOutput(first, id)).toBe(`task-${i}\n`);
    }
  });
});
