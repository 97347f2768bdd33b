import { readFile } from "node:fs/promises";
import { applyPlugins, createCommandHooksPlugin, createSessionHooks, type HookError } from "@unforget/hooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually, temporaryDirectory, waitForNotification } from "../__fixtures__/task-test-kit.ts";
import { createTaskStatusPlugin } from "../tools/task-attachments.ts";
import { getTaskHooks } from "./task-hooks.ts";
import { createTaskManager, type TaskManager } from "./task-manager.ts";

let dir: string;
let cleanup: () => Promise<void>;
const managers: TaskManager[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-hooks-"));
});
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.close();
  await cleanup();
});

async function setup() {
  const errors: HookError[] = [];
  const hooks = createSessionHooks({ sessionId: "session-1", onHookError: (error) => errors.push(error) });
  const manager = await createTaskManager({
    dir,
    hooks,
    sessionId: "session-1",
    stall: { intervalMs: 50, quietMs: 200 },
  });
  managers.push(manager);
  return { hooks, manager, errors };
}

describe("task hooks on the session bus", () => {
  it("plugins observe started, stalled and settled; a throwing tap is reported and changes nothing", async () => {
    const { hooks, manager, errors } = await setup();
    const seen: string[] = [];
    applyPlugins(hooks, [
      {
        name: "audit",
        apply(pluginHooks) {
          const tasks = getTaskHooks(pluginHooks);
          tasks.taskStarted.tapPromise("audit", async (event) => {
            seen.push(`started ${event.type} ${event.sessionId}`);
          });
          tasks.taskStalled.tapPromise("audit", async (event) => {
            seen.push(`stalled ${event.prompt}`);
          });
          tasks.taskSettled.tapPromise("audit", async (event) => {
            seen.push(`settled ${event.status} ${event.exitCode}`);
          });
        },
      },
      {
        name: "broken",
        apply(pluginHooks) {
          getTaskHooks(pluginHooks).taskSettled.tapPromise("broken", async () => {
            throw new Error("boom");
          });
        },
      },
    ]);
    const id = await manager.start({
      type: "local_bash",
      command: "printf 'Password: '; read secret; echo ok",
    });
    await waitForNotification(manager, (n) => n.taskId === id && n.kind === "stalled");
    await manager.write(id, "hunter2\n");
    await waitForNotification(manager, (n) => n.taskId === id && n.kind === "finished");
    await eventually(() => seen.length === 3);
    expect(seen).toEqual(["started local_bash session-1", "stalled password", "settled completed 0"]);
    expect(errors.map((error) => error.handler)).toEqual(["broken"]);
  });

  it("command hooks subscribe to TaskSettled by name, with the status as matcher", async () => {
    const { hooks, manager } = await setup();
    const log = `${dir}/settled.jsonl`;
    applyPlugins(hooks, [
      createCommandHooksPlugin({
        projectDir: dir,
        settings: {
          TaskSettled: [
            { matcher: "failed", hooks: [{ type: "command", command: `cat >> ${log}; echo >> ${log}` }] },
          ],
        },
      }),
    ]);
    const ok = await manager.start({ type: "local_bash", command: "true" });
    const broken = await manager.start({ type: "local_bash", command: "exit 2" });
    await manager.wait(ok);
    await manager.wait(broken);
    await eventually(async () => (await readFile(log, "utf8").catch(() => "")).includes("\n"));
    const events = (await readFile(log, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events).toMatchObject([
      {
        hook_event_name: "TaskSettled",
        task_id: broken,
        status: "failed",
        exit_code: 2,
        session_id: "session-1",
      },
    ]);
  });

  it("the status plugin tells the agent about its tasks after a compaction, not on a fresh start", async () => {
    const { hooks, manager } = await setup();
    applyPlugins(hooks, [createTaskStatusPlugin(manager)]);
    const id = await manager.start({ type: "local_bash", command: "sleep 30", description: "dev server" });
    const afterCompact = await hooks.sessionStart.promise([], { sessionId: "session-1", source: "compact" });
    expect(afterCompact).toMatchObject([{ kind: "task-status", source: "@unforget/tasks" }]);
    expect(afterCompact[0]!.content).toMatch(
      new RegExp(
        `^Background tasks .*\\n- ${id} \\(local_bash\\) dev server — running for \\d+s, 0 B of output, no output yet$`,
      ),
    );
    expect(await hooks.sessionStart.promise([], { sessionId: "session-1", source: "startup" })).toEqual([]);
    await manager.stop(id);
  });
});
