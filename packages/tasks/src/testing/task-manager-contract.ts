import { setTimeout as sleep } from "node:timers/promises";
import { UnforgetError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import type { TaskManager } from "../manager/task-manager.ts";
import type { TaskNotification } from "../task/task-notification.ts";
import { fixturePerTest } from "./fixture-per-test.ts";

/** One scenario's managers: the agent's, and a second one (another process or machine) on the same backend. */
export interface TaskManagerFixture {
  /** The manager an agent uses; its tasks run in it, or on workers the fixture started. */
  manager: TaskManager;
  /** Another manager on the same backend, as a second agent process would open it. */
  peer: TaskManager;
  /** Called after the scenario: close the managers (and workers) and drop the storage. */
  teardown(): Promise<void>;
}

export interface TaskManagerContractOptions {
  /** Used in the describe title. */
  name: string;
  /**
   * Called before every scenario. The managers take `local_bash` tasks; their stall detection must be quick
   * (`stall: { intervalMs: 50, quietMs: 300 }` or so), so that a prompt is noticed within a second.
   */
  setup(): Promise<TaskManagerFixture>;
}

async function nextNotification(
  manager: TaskManager,
  matches: (notification: TaskNotification) => boolean,
  seen: TaskNotification[] = [],
): Promise<TaskNotification> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    seen.push(...(await manager.takeNotifications()));
    const match = seen.find(matches);
    if (match !== undefined) return match;
    await sleep(25);
  }
  throw new Error(`no matching notification within 60 s; got ${JSON.stringify(seen)}`);
}

async function readAll(manager: TaskManager, id: string, maxBytes?: number): Promise<string> {
  let text = "";
  for (let offset = 0; ; ) {
    const chunk = await manager.readOutput(id, offset, maxBytes === undefined ? {} : { maxBytes });
    expect(Buffer.byteLength(chunk.data)).toBe(chunk.nextOffset - offset);
    text += chunk.data;
    offset = chunk.nextOffset;
    if (chunk.done) return text;
    if (chunk.data === "") await sleep(20);
  }
}

/**
 * What a task manager guarantees whatever its backend (files in a directory, PostgreSQL with workers): a
 * task's end is notified once, its output is read with exact byte offsets from any manager, a prompt is
 * answered from another manager, a stop ends it as killed, and bad input gets typed errors.
 */
export function describeTaskManagerContract(options: TaskManagerContractOptions): void {
  describe(`task manager contract: ${options.name}`, () => {
    const fixture = fixturePerTest(() => options.setup());

    it("runs a command, notifies its end once, and any manager reads its output with exact offsets", async () => {
      const { manager, peer } = fixture();
      const id = await manager.start({
        type: "local_bash",
        command: "printf 'héllo\\n'; printf 'wörld ✓\\n' >&2",
      });
      const seen: TaskNotification[] = [];
      const finished = await nextNotification(manager, (n) => n.taskId === id, seen);
      expect(finished).toMatchObject({ kind: "finished", exitCode: 0, type: "local_bash" });
      expect(await readAll(peer, id, 4)).toBe("héllo\nwörld ✓\n");
      expect(await manager.get(id)).toMatchObject({ status: "completed", exitCode: 0, outputBytes: 18 });
      await sleep(200);
      expect([...seen, ...(await manager.takeNotifications())].filter((n) => n.taskId === id)).toHaveLength(
        1,
      );
      expect(await peer.takeNotifications()).toEqual([]);
      const past = await peer.readOutput(id, 19).catch((error: unknown) => error);
      expect(past).toMatchObject({ code: "task_invalid_input", field: "offset", outputBytes: 18 });
    });

    it("a failing command notifies failed with its exit code and the tail of its output", async () => {
      const id = await fixture().manager.start({
        type: "local_bash",
        command: "echo 'cannot find module x' >&2; exit 3",
      });
      const failed = await nextNotification(fixture().manager, (n) => n.taskId === id);
      expect(failed).toMatchObject({ kind: "failed", reason: "exit", exitCode: 3 });
      expect(failed.kind === "failed" && failed.tail).toContain("cannot find module x");
    });

    it("a prompt is noticed, and answered through a command from another manager", async () => {
      const { manager, peer } = fixture();
      const id = await manager.start({
        type: "local_bash",
        command: "printf 'Continue? [y/N] '; read answer; echo \"answer=$answer\"",
      });
      const stalled = await nextNotification(manager, (n) => n.taskId === id);
      expect(stalled).toMatchObject({ kind: "stalled", prompt: "yes/no question" });
      await peer.write(id, "y\n");
      await nextNotification(manager, (n) => n.taskId === id && n.kind === "finished");
      expect(await readAll(peer, id)).toBe("Continue? [y/N] answer=y\n");
    });

    it("another manager stops a running task: it ends as killed, and nobody is notified", async () => {
      const { manager, peer } = fixture();
      const id = await manager.start({ type: "local_bash", command: "echo started; sleep 60" });
      const until = Date.now() + 60_000;
      while ((await peer.get(id)).outputBytes === 0 && Date.now() < until) await sleep(25);
      expect(await peer.stop(id)).toMatchObject({ status: "killed", endReason: "stopped" });
      expect(await manager.wait(id, { timeoutMs: 60_000 })).toMatchObject({ status: "killed" });
      await sleep(200);
      expect((await manager.takeNotifications()).filter((n) => n.taskId === id)).toEqual([]);
      await expect(peer.write(id, "x")).rejects.toMatchObject({ code: "task_state" });
    });

    it("bad input gets typed errors, and nothing is started", async () => {
      const { manager } = fixture();
      const before = (await manager.list()).length;
      const errors = await Promise.all([
        manager.start({ type: "local_bash", command: "" }).catch((e: unknown) => e),
        manager.start({ type: "no_such_type" }).catch((e: unknown) => e),
        manager.readOutput("bash-doesnotexist").catch((e: unknown) => e),
        manager.readOutput("bash-doesnotexist", -1).catch((e: unknown) => e),
        manager.stop("bash-doesnotexist").catch((e: unknown) => e),
      ]);
      for (const error of errors) expect(error).toBeInstanceOf(UnforgetError);
      expect(errors.map((error) => (error as UnforgetError).code)).toEqual([
        "task_invalid_input",
        "task_invalid_input",
        "task_not_found",
        "task_invalid_input",
        "task_not_found",
      ]);
      expect(await manager.list()).toHaveLength(before);
    });
  });
}
