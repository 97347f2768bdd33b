import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLazyTaskManager } from "./lazy-task-manager.ts";

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function tasksDir(): string {
  root = mkdtempSync(join(tmpdir(), "unforget-lazy-tasks-"));
  return join(root, "tasks");
}

describe("the app's task manager, opened on first use", () => {
  it("with no task in its folder, has no notifications and opens nothing (the folder stays unwritten)", async () => {
    const dir = tasksDir();
    const tasks = createLazyTaskManager({ dir });
    expect(await tasks.takeNotifications()).toEqual([]);
    expect(await tasks.takeNotifications()).toEqual([]);
    await tasks.close();
    // An opened manager writes its lease into the folder at once.
    expect(existsSync(dir)).toBe(false);
  });

  it("runs a background command as the real manager does: its output, its end, its notification", async () => {
    const dir = tasksDir();
    const tasks = createLazyTaskManager({ dir });
    try {
      const id = await tasks.start({ type: "local_bash", command: "echo built", description: "build" });
      const ended = await tasks.wait(id, { timeoutMs: 20_000 });
      expect(ended.status).toBe("completed");
      expect((await tasks.readOutput(id)).data).toContain("built");
      expect((await tasks.list()).map((task) => task.id)).toEqual([id]);
      const notifications = await tasks.takeNotifications();
      expect(notifications.map((notification) => [notification.taskId, notification.kind])).toEqual([
        [id, "finished"],
      ]);
    } finally {
      await tasks.close();
    }
  });

  it("a later run finds the tasks an earlier one left in the folder", async () => {
    const dir = tasksDir();
    const earlier = createLazyTaskManager({ dir });
    const id = await earlier.start({ type: "local_bash", command: "echo done", description: "earlier" });
    await earlier.wait(id, { timeoutMs: 20_000 });
    await earlier.close();
    const later = createLazyTaskManager({ dir });
    try {
      expect((await later.get(id)).status).toBe("completed");
    } finally {
      await later.close();
    }
  });
});
