import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { groupExists, isProcessAlive, readProcessIdentity } from "@unforget/process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  eventually,
  readAllOutput,
  temporaryDirectory,
  waitForNotification,
} from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";
import { OutputOffsetError } from "../task/task-errors.ts";

let dir: string;
let cleanup: () => Promise<void>;
let manager: TaskManager;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
  manager = await createTaskManager({ dir, graceMs: 300, stall: { intervalMs: 50, quietMs: 300 } });
});
afterEach(async () => {
  await manager.close();
  await cleanup();
});

describe("local_bash", () => {
  it("runs a command, keeps stdout and stderr in the output file, and notifies when it finishes", async () => {
    const id = await manager.start({ type: "local_bash", command: "echo out; echo err >&2; printf 'é😀'" });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "finished", exitCode: 0, type: "local_bash", outputBytes: 14 });
    expect(await readAllOutput(manager, id)).toBe("out\nerr\né😀");
    expect(await manager.get(id)).toMatchObject({
      status: "completed",
      exitCode: 0,
      endReason: "exit",
      outputBytes: 14,
    });
  });

  it("a command that crashes fails with its exit code and the tail of its output", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: "echo 'Error: cannot find module x' >&2; exit 3",
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "failed", reason: "exit", exitCode: 3 });
    expect(match.kind === "failed" && match.tail).toContain("cannot find module x");
  });

  it("a process killed by a signal fails with the shell's code for it", async () => {
    const id = await manager.start({ type: "local_bash", command: "kill -SEGV $$" });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "failed", exitCode: 139 });
    expect(match.kind === "failed" && match.error).toContain("SIGSEGV");
  });

  it("stdin is a pipe from the manager, never the terminal: a reader sees end of input when it is closed", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: "test -t 0 || echo not-a-terminal; cat; echo eof",
    });
    await manager.write(id, "hello\n", { end: true });
    await manager.wait(id, { timeoutMs: 45_000 });
    expect(await readAllOutput(manager, id)).toBe("not-a-terminal\nhello\neof\n");
  });

  it("never sources the user's ~/.bashrc, even where bash would (stdin a socket, SHLVL unset)", async () => {
    const home = join(dir, "home");
    await mkdir(home);
    await writeFile(join(home, ".bashrc"), "echo bashrc-was-read\n");
    const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL };
    process.env.HOME = home;
    delete process.env.SHLVL;
    try {
      const id = await manager.start({ type: "local_bash", command: "echo ran" });
      await manager.wait(id, { timeoutMs: 45_000 });
      expect(await readAllOutput(manager, id)).toBe("ran\n");
    } finally {
      process.env.HOME = saved.HOME;
      if (saved.SHLVL !== undefined) process.env.SHLVL = saved.SHLVL;
    }
  });

  it("answers a prompt through stdin after the stall notice", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: "printf 'Continue? [y/N] '; read answer; echo \"answer=$answer\"",
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "stalled", prompt: "yes/no question", tail: "Continue? [y/N] " });
    await manager.write(id, "y\n");
    await waitForNotification(manager, (n) => n.taskId === id && n.kind === "finished");
    expect(await readAllOutput(manager, id)).toBe("Continue? [y/N] answer=y\n");
  });

  it("quiet output that is no prompt raises nothing", async () => {
    const id = await manager.start({ type: "local_bash", command: "echo compiling; sleep 1; echo done" });
    const { all } = await waitForNotification(manager, (n) => n.taskId === id && n.kind === "finished");
    expect(all.map((n) => n.kind)).toEqual(["finished"]);
  });

  it("stop ends a process group that ignores SIGTERM with SIGKILL, children included", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: "trap '' TERM; sleep 60 & echo started; while true; do sleep 0.05; done",
    });
    await eventually(async () => (await manager.get(id)).outputBytes > 0);
    const { pid } = await manager.get(id);
    expect(pid).toBeDefined();
    const stopped = await manager.stop(id);
    expect(stopped).toMatchObject({ status: "killed", endReason: "stopped" });
    expect(groupExists(pid!)).toBe(false);
    // A stopped task does not notify: whoever stopped it knows.
    expect(await manager.takeNotifications()).toEqual([]);
    expect(await manager.stop(id)).toMatchObject({ status: "killed" });
  });

  it("enforces a timeout in the background and reports it", async () => {
    const id = await manager.start({ type: "local_bash", command: "sleep 30", timeoutMs: 300 });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "failed", reason: "timeout" });
    expect(await manager.get(id)).toMatchObject({ status: "failed", endReason: "timeout" });
  });

  it("notifies at the deadline although the task never ends, once", async () => {
    const id = await manager.start({
      type: "local_bash",
      command: "echo working; sleep 30",
      deadlineMs: 200,
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "deadline" });
    // The tail is the output so far: on a busy machine the shell may not have printed yet at 200 ms.
    const tail = match.kind === "deadline" ? match.tail : undefined;
    expect(typeof tail === "string" && "working\n".startsWith(tail)).toBe(true);
    expect((await manager.get(id)).status).toBe("running");
    await manager.stop(id);
    expect(await manager.takeNotifications()).toEqual([]);
  });

  it("leftover processes of a finished command are ended with it", async () => {
    // The command leaves a child behind and exits only once the test has seen that child alive.
    const id = await manager.start({
      type: "local_bash",
      command: "sleep 60 & echo $! > child.pid; while [ ! -e go ]; do sleep 0.02; done",
      cwd: dir,
    });
    await eventually(async () =>
      (await readFile(join(dir, "child.pid"), "utf8").catch(() => "")).endsWith("\n"),
    );
    const child = readProcessIdentity(Number(await readFile(join(dir, "child.pid"), "utf8")));
    expect(child).toBeDefined();
    expect(isProcessAlive(child!)).toBe(true);
    const { pid: leader } = await manager.get(id);
    await writeFile(join(dir, "go"), "");
    expect(await manager.wait(id, { timeoutMs: 45_000 })).toMatchObject({ status: "completed", exitCode: 0 });
    // By the time the task is recorded as ended, nothing it started still runs.
    expect(isProcessAlive(child!)).toBe(false);
    expect(groupExists(leader!)).toBe(false);
  });

  it("rejects bad specs and unknown ids with typed errors that say what to do", async () => {
    await expect(manager.start({ type: "local_bash", command: "" })).rejects.toMatchObject({
      code: "task_invalid_input",
      field: "command",
    });
    await expect(manager.start({ type: "local_bash", command: "ls", cwd: "/no/such/dir" })).rejects.toThrow(
      /not an existing directory/,
    );
    await expect(manager.start({ type: "shell" } as never)).rejects.toMatchObject({ field: "type" });
    await expect(manager.start({ type: "local_bash", command: "ls", timeoutMs: -1 })).rejects.toMatchObject({
      field: "timeoutMs",
    });
    await expect(manager.readOutput("bash-nope")).rejects.toMatchObject({ code: "task_not_found" });
    await expect(manager.readOutput("../x")).rejects.toMatchObject({ code: "task_invalid_input" });
    await expect(manager.stop("bash-nope")).rejects.toMatchObject({ code: "task_not_found" });
    const id = await manager.start({ type: "local_bash", command: "true" });
    await manager.wait(id);
    await expect(manager.write(id, "x")).rejects.toMatchObject({ code: "task_state" });
    await expect(manager.readOutput(id, -1)).rejects.toMatchObject({ field: "offset" });
    await expect(manager.readOutput(id, 0.5)).rejects.toMatchObject({ field: "offset" });
  });

  it("an offset past the end is a typed error naming the current size, not an empty done read", async () => {
    const id = await manager.start({ type: "local_bash", command: "printf 'héllo'" });
    await manager.wait(id, { timeoutMs: 45_000 });
    expect(await manager.readOutput(id, 6)).toEqual({ data: "", nextOffset: 6, done: true });
    const error = await manager.readOutput(id, 7).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputOffsetError);
    expect(error).toMatchObject({ code: "task_invalid_input", field: "offset", offset: 7, outputBytes: 6 });
    expect((error as Error).message).toMatch(/7 is past the end .* which is 6 bytes so far/);
    // A task with no output yet: any offset but 0 is past its end.
    const quiet = await manager.start({ type: "local_bash", command: "sleep 30" });
    await expect(manager.readOutput(quiet, 1)).rejects.toMatchObject({ outputBytes: 0 });
    expect(await manager.readOutput(quiet, 0)).toEqual({ data: "", nextOffset: 0, done: false });
    await manager.stop(quiet);
  });
});
