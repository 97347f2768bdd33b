import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, waitForNotification } from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";
import { TaskNotPortableError } from "../task/task-errors.ts";
import { renderTaskNotification } from "../tools/task-attachments.ts";
import { BUILT_IN_TASK_TYPES } from "../types/built-in-task-types.ts";
import { defineTaskType, type PortableTaskSpec } from "../types/task-type.ts";
import { fail } from "../types/validate-task-spec.ts";
import { createFileTaskBackend } from "./file-task-backend.ts";
import type { TaskBackend } from "./task-backend.ts";

let dir: string;
let cleanup: () => Promise<void>;
let enqueued: PortableTaskSpec[];
let manager: TaskManager;
let backend: TaskBackend;

/** The file backend with a queue that only records what it was given: nothing runs in this manager. */
function queued(base: TaskBackend): TaskBackend {
  return {
    ...base,
    queue: {
      maxRunMs: 86_400_000,
      liveWorkers: async () => 0,
      async enqueue(record, spec) {
        enqueued.push(spec);
        return base.store.create(record);
      },
    },
  };
}

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-portable-"));
  enqueued = [];
  backend = queued(createFileTaskBackend({ dir }));
  manager = await createTaskManager({ backend, sessionId: "session-1", pollMs: 20 });
});
afterEach(async () => {
  await manager.close();
  await cleanup();
});

describe("a manager with a queue", () => {
  it("needs no directory, enqueues portable specs, and runs nothing itself", async () => {
    expect(manager.dir).toBeUndefined();
    const id = await manager.start({
      type: "local_bash",
      command: "make test",
      cwd: "/srv/checkout/on/the/worker",
      env: { CI: "1" },
      timeoutMs: 60_000,
    });
    expect(enqueued).toEqual([
      {
        type: "local_bash",
        command: "make test",
        cwd: "/srv/checkout/on/the/worker",
        env: { CI: "1" },
        timeoutMs: 60_000,
      },
    ]);
    expect(await manager.get(id)).toMatchObject({ status: "running", watchedBy: "nobody", outputBytes: 0 });
    expect((await backend.store.get(id))?.owner).toBeUndefined();
    expect((await backend.store.get(id))?.sessionId).toBe("session-1");
  });

  it("refuses specs that carry code with TaskNotPortableError, and stores nothing", async () => {
    const job = { name: "consolidate", run: async () => "done" };
    const refused = [
      manager.start({ type: "local_agent", description: "fix the bug", run: async () => "ok" }),
      manager.start({
        type: "local_workflow",
        description: "build and check",
        steps: [
          { name: "build", command: "make" },
          { name: "check", run: async () => "ok" },
        ],
      }),
      manager.start({ type: "monitor", command: "serve", check: async () => undefined }),
      manager.start({
        type: "monitor",
        command: "serve",
        check: "curl -f localhost",
        restart: async () => undefined,
      }),
    ];
    const errors = await Promise.all(refused.map((start) => start.catch((error: unknown) => error)));
    for (const error of errors) expect(error).toBeInstanceOf(TaskNotPortableError);
    expect(errors.map((error) => (error as TaskNotPortableError).field)).toEqual([
      "type",
      "steps[1].run",
      "check",
      "restart",
    ]);
    expect((errors[1] as Error).message).toMatch(/steps\[1\] \("check"\) is a function/);
    expect(enqueued).toEqual([]);
    expect(await manager.list()).toEqual([]);

    // A dream travels by its job's name; the worker runs the job it was given under that name.
    await manager.start({ type: "dream", job });
    expect(enqueued).toEqual([{ type: "dream", job: "consolidate" }]);
  });

  it("refuses unknown types and runs too long for the queue, before anything is stored", async () => {
    await expect(manager.start({ type: "shell", command: "ls" })).rejects.toMatchObject({
      code: "task_invalid_input",
      field: "type",
    });
    const small = await createTaskManager({
      backend: { ...backend, queue: { ...backend.queue!, maxRunMs: 1_000 } },
    });
    await expect(small.start({ type: "local_bash", command: "ls", timeoutMs: 1_000 })).rejects.toMatchObject({
      field: "timeoutMs",
      message: expect.stringMatching(/must end within 1000 ms/),
    });
    await expect(small.start({ type: "local_bash", command: "ls", deadlineMs: 5_000 })).rejects.toMatchObject(
      {
        field: "deadlineMs",
      },
    );
    await small.close();
    expect(enqueued).toEqual([]);
  });

  it("a task no live worker serves notifies no_worker once, instead of waiting in silence", async () => {
    const waiting = await createTaskManager({
      backend,
      sessionId: "s",
      noWorkerMs: 1,
      stall: { intervalMs: 20 },
    });
    const id = await waiting.start({ type: "local_bash", command: "make" });
    const { match } = await waitForNotification(waiting, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "no_worker", type: "local_bash" });
    expect(renderTaskNotification(match)).toMatch(/no worker that runs local_bash tasks is alive/);
    await sleep(100);
    expect(await waiting.takeNotifications()).toEqual([]);
    await waiting.close();
  });

  it("stops a task no worker has claimed at once; input to it is refused until it runs", async () => {
    const id = await manager.start({ type: "local_bash", command: "sleep 30" });
    await expect(manager.write(id, "y\n")).rejects.toMatchObject({
      code: "task_state",
      message: expect.stringMatching(/not running yet/),
    });
    expect(await manager.stop(id)).toMatchObject({ status: "killed", endReason: "stopped" });
    expect(await manager.takeNotifications()).toEqual([]);
  });
});

describe("defineTaskType", () => {
  const countdown = defineTaskType<{ type: "countdown"; from: number; description?: string }>({
    type: "countdown",
    idPrefix: "count",
    validate(spec) {
      if (!Number.isSafeInteger(spec.from)) fail("from", "must be a whole number to count down from.");
    },
    describe: (spec) => `count down from ${spec.from}`,
    toPortable: (spec) => ({ ...spec }),
    start(spec, context) {
      let stopped = false;
      const done = (async () => {
        const { appendFile } = await import("node:fs/promises");
        for (let n = spec.from; n > 0 && !stopped; n--) await appendFile(context.outputPath, `${n}\n`);
        return { status: "completed" as const, endReason: "exit" as const, result: "lift-off" };
      })();
      return {
        done,
        watchForPrompts: false,
        async stop() {
          stopped = true;
          await done;
        },
      };
    },
  });

  it("adds a type that a manager runs like the built-in ones", async () => {
    const local = await createTaskManager({ dir, types: [...BUILT_IN_TASK_TYPES, countdown] });
    const id = await local.start({ type: "countdown", from: 3 });
    expect(id).toMatch(/^count-[0-9a-z]{10}$/);
    expect(await local.wait(id)).toMatchObject({
      status: "completed",
      result: "lift-off",
      description: "count down from 3",
    });
    expect((await local.readOutput(id)).data).toBe("3\n2\n1\n");
    await expect(local.start({ type: "countdown", from: "x" })).rejects.toMatchObject({ field: "from" });
    await local.close();
  });

  it("refuses a type registered twice and a malformed definition", async () => {
    await expect(createTaskManager({ dir, types: [countdown, countdown] })).rejects.toMatchObject({
      field: "types",
    });
    expect(() => defineTaskType({ ...countdown, type: "Bad Type" as "countdown" })).toThrow(
      /lower-case name/,
    );
    expect(() => defineTaskType({ ...countdown, idPrefix: "no-dash" })).toThrow(/idPrefix/);
  });
});
