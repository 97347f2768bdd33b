import { rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createMcpStdioClient } from "@unforget/mcp";
import { groupExists } from "@unforget/process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  eventually,
  readAllOutput,
  temporaryDirectory,
  waitForNotification,
} from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";
import { TaskInputError } from "../task/task-errors.ts";

const FAKE_MCP = fileURLToPath(new URL("../__fixtures__/fake-mcp-server.mjs", import.meta.url));

let dir: string;
let cleanup: () => Promise<void>;
let manager: TaskManager;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-flow-"));
  manager = await createTaskManager({
    dir,
    graceMs: 200,
    stall: { intervalMs: 50, quietMs: 60_000 },
    connectMcp: createMcpStdioClient,
  });
});
afterEach(async () => {
  await manager.close();
  await cleanup();
});

describe("local_workflow", () => {
  it("runs steps in order, each fed the previous step's output", async () => {
    const id = await manager.start({
      type: "local_workflow",
      description: "count words",
      steps: [
        { name: "list", command: "printf 'beta\\nalpha\\ngamma\\n'" },
        { name: "sort", command: "sort" },
        { name: "shout", run: async ({ input }) => (await input()).toUpperCase() },
        { name: "count", command: "wc -l | tr -d ' '" },
      ],
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "finished" });
    expect(await readAllOutput(manager, id)).toBe(
      [
        "--- step 1/4: list ---",
        "beta\nalpha\ngamma",
        "--- step 2/4: sort ---",
        "alpha\nbeta\ngamma",
        "--- step 3/4: shout ---",
        "ALPHA\nBETA\nGAMMA",
        "--- step 4/4: count ---",
        "3\n",
      ].join("\n"),
    );
  });

  it("the first failing step fails the workflow and the rest do not run", async () => {
    const id = await manager.start({
      type: "local_workflow",
      description: "build and test",
      steps: [
        { name: "build", command: "echo built" },
        { name: "test", command: "echo '1 test failed' >&2; exit 1" },
        { name: "deploy", command: "echo deployed" },
      ],
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "failed", exitCode: 1, error: 'step 2/3 "test" exited with code 1' });
    expect(await readAllOutput(manager, id)).not.toContain("deployed");
  });
});

describe("monitor", () => {
  it("restarts a server that exits, and fails once the restarts are used up", async () => {
    const id = await manager.start({
      type: "monitor",
      command: "echo up; sleep 0.2; exit 1",
      check: "true",
      intervalMs: 50,
      maxRestarts: 2,
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({
      kind: "failed",
      error: "still unhealthy after 2 restarts: the server exited (code 1)",
    });
    const output = await readAllOutput(manager, id);
    expect(output.match(/^up$/gm)).toHaveLength(3);
    expect(output).toContain("[monitor] restarting (2/2)");
  });

  it("checks with a function and restarts through the app's callback", async () => {
    let healthy = false;
    let restarts = 0;
    const id = await manager.start({
      type: "monitor",
      check: async () => {
        if (!healthy) throw new Error("connection refused");
      },
      restart: async () => {
        restarts += 1;
        healthy = true;
      },
      intervalMs: 30,
      failuresBeforeRestart: 2,
    });
    await waitForNotification(manager, () => false, 600).catch(() => undefined);
    expect(restarts).toBe(1);
    expect(await manager.stop(id)).toMatchObject({ status: "killed" });
    expect(await readAllOutput(manager, id)).toMatch(
      /check failed: connection refused\n.*check failed: connection refused\n\[monitor\] restarting \(1\/3\)\n$/s,
    );
  });

  it("a check command that fails marks the server unhealthy", async () => {
    const flag = `${dir}/healthy`;
    await writeFile(flag, "");
    const id = await manager.start({
      type: "monitor",
      check: `test -f ${flag}`,
      intervalMs: 30,
      failuresBeforeRestart: 1,
    });
    await waitForNotification(manager, () => false, 300).catch(() => undefined);
    expect((await manager.get(id)).status).toBe("running");
    await rm(flag);
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({
      kind: "failed",
      error: "unhealthy, and it has nothing to restart: the check command exited with code 1",
    });
  });
});

describe("monitor_mcp", () => {
  it("pings a stdio MCP server, restarts it when it hangs, and ends its process group on stop", async () => {
    const id = await manager.start({
      type: "monitor_mcp",
      command: `node ${FAKE_MCP}`,
      env: { FAKE_MCP_ANSWERS: "2" },
      intervalMs: 40,
      checkTimeoutMs: 300,
      failuresBeforeRestart: 1,
      maxRestarts: 1,
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({
      kind: "failed",
      error: "still unhealthy after 1 restarts: no answer within 300 ms",
    });
    const output = await readAllOutput(manager, id);
    expect(output.match(/fake-mcp started/g)).toHaveLength(2);
  });

  it("a healthy server keeps running until the monitor is stopped", async () => {
    const id = await manager.start({
      type: "monitor_mcp",
      command: `node ${FAKE_MCP}`,
      intervalMs: 40,
      checkTimeoutMs: 2_000,
    });
    // The server is up (its pid recorded) however slow the machine is; then health checks (every 40 ms) run for
    // half a second, and none of them ends the task.
    await eventually(async () => (await manager.get(id)).pid !== undefined);
    await waitForNotification(manager, () => false, 500).catch(() => undefined);
    const { pid, status } = await manager.get(id);
    expect(status).toBe("running");
    expect(await manager.stop(id)).toMatchObject({ status: "killed" });
    expect(groupExists(pid!)).toBe(false);
    expect(await readAllOutput(manager, id)).toBe("fake-mcp started\n");
  });

  it("refuses a server command when the app gave no MCP client, naming the package that has one, and stores nothing", async () => {
    const bare = await createTaskManager({ dir, graceMs: 200 });
    try {
      const refused = await bare
        .start({ type: "monitor_mcp", command: `node ${FAKE_MCP}` })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TaskInputError);
      expect(refused).toMatchObject({ field: "command", message: expect.stringMatching(/@unforget\/mcp/) });
      expect(await bare.list()).toEqual([]);
      // A server the app pings itself needs no client.
      const id = await bare.start({ type: "monitor_mcp", ping: async () => undefined, intervalMs: 40 });
      expect((await bare.stop(id)).status).toBe("killed");
    } finally {
      await bare.close();
    }
  });
});
