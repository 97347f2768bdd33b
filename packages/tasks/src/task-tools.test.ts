import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, waitForNotification } from "./__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "./task-manager.ts";
import { createTaskTools, type TaskTool } from "./task-tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let manager: TaskManager;
let tools: Record<string, TaskTool>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-tools-"));
  manager = await createTaskManager({ dir, graceMs: 200, stall: { intervalMs: 50, quietMs: 200 } });
  tools = Object.fromEntries(
    createTaskTools(manager, { cwd: dir, maxOutputBytes: 16 }).map((tool) => [tool.definition.name, tool]),
  );
});
afterEach(async () => {
  await manager.close();
  await cleanup();
});

const idOf = (text: string) => /task (\S+)\./.exec(text)![1]!;

describe("task tools", () => {
  it("define five tools with object schemas that refuse unknown fields", () => {
    expect(Object.keys(tools)).toEqual(["task_start", "task_output", "task_input", "task_stop", "task_list"]);
    for (const tool of Object.values(tools)) {
      expect(tool.definition.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
    }
  });

  it("start, read with offsets until the end, answer a prompt, stop and list", async () => {
    const id = idOf(
      await tools.task_start!.execute({
        command: "printf 'Proceed? (y/n) '; read a; echo \"got $a, and a longer line\"",
      }),
    );
    await waitForNotification(manager, (n) => n.taskId === id && n.kind === "stalled");
    expect(await tools.task_input!.execute({ id, input: "y\n" })).toBe(`Sent "y\\n" to task ${id}.`);
    await manager.wait(id, { timeoutMs: 45_000 });
    const first = await tools.task_output!.execute({ id });
    expect(first).toBe(
      "Proceed? (y/n) g\n---\nnext_offset: 16 (completed; 40 B of output so far). Call task_output again with this offset for more.",
    );
    const second = await tools.task_output!.execute({ id, offset: 16 });
    expect(second.startsWith("ot y, and a long")).toBe(true);
    const last = await tools.task_output!.execute({ id, offset: 32 });
    expect(last).toBe(
      "er line\n\n---\nThe task has ended (completed, exit code 0) and all 40 B of its output has been read.",
    );

    const sleeper = idOf(
      await tools.task_start!.execute({ command: "sleep 30", description: "a long sleep" }),
    );
    expect(await tools.task_list!.execute({})).toMatch(
      new RegExp(`- ${sleeper} \\(local_bash\\) a long sleep — running for`),
    );
    expect(await tools.task_stop!.execute({ id: sleeper })).toBe(`Stopped task ${sleeper}.`);
    expect(await tools.task_stop!.execute({ id: sleeper })).toBe(
      `Task ${sleeper} had already ended (killed).`,
    );
  });

  it("refuse invalid input with a message that names the field and the fix", async () => {
    await expect(tools.task_start!.execute({})).rejects.toMatchObject({
      code: "task_invalid_input",
      field: "command",
      message: expect.stringMatching(/"command" is required/),
    });
    await expect(tools.task_start!.execute({ command: "ls", timeout: 5 })).rejects.toMatchObject({
      field: "timeout",
      message: expect.stringMatching(
        /unknown field "timeout"; the fields are command, description, cwd, timeout_ms, deadline_ms/,
      ),
    });
    await expect(tools.task_output!.execute({ id: "bash-x", offset: -3 })).rejects.toMatchObject({
      field: "offset",
      message: expect.stringMatching(/must be a whole number ≥ 0/),
    });
    await expect(tools.task_output!.execute({ id: "bash-doesnotexist" })).rejects.toMatchObject({
      code: "task_not_found",
    });
    await expect(tools.task_input!.execute({ id: "bash-x" })).rejects.toMatchObject({ field: "input" });
    await expect(tools.task_stop!.execute("bash-x")).rejects.toMatchObject({ field: "input" });
    await expect(
      tools.task_start!.execute({ command: "ls", cwd: "/definitely/not/here" }),
    ).rejects.toMatchObject({ field: "cwd" });
  });
});
