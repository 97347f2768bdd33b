import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Tool, ToolContext, ToolOutput } from "@unforget/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readAllOutput, temporaryDirectory, waitForNotification } from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";
import { createTaskTools } from "./task-tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let manager: TaskManager;
let tools: Record<string, Tool>;
let context: ToolContext;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-tools-"));
  manager = await createTaskManager({ dir, graceMs: 200, stall: { intervalMs: 50, quietMs: 200 } });
  tools = Object.fromEntries(
    createTaskTools(manager, { maxOutputBytes: 16 }).map((tool) => [tool.name, tool]),
  );
  context = {
    signal: new AbortController().signal,
    sessionId: "session-1",
    toolUseId: "toolu_1",
    cwd: dir,
    sessionState: new Map(),
  };
});
afterEach(async () => {
  await manager.close();
  await cleanup();
});

/** Runs a tool and returns its text, failing the test on an error result. */
async function call(name: string, input: unknown): Promise<string> {
  const output = await tools[name]!.execute(input as Record<string, unknown>, context);
  expect(output.isError, String(output.content)).toBe(false);
  return output.content as string;
}

/** Runs a tool that must answer with an error result. */
async function refused(name: string, input: unknown): Promise<ToolOutput> {
  const output = await tools[name]!.execute(input as Record<string, unknown>, context);
  expect(output.isError).toBe(true);
  return output;
}

const idOf = (text: string) => /task (\S+)\./.exec(text)![1]!;

describe("task tools", () => {
  it("are five tools in core's contract, with object schemas that refuse unknown fields", () => {
    expect(Object.keys(tools)).toEqual(["task_start", "task_output", "task_input", "task_stop", "task_list"]);
    for (const tool of Object.values(tools)) {
      expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
      expect(tool.description.length).toBeGreaterThan(20);
    }
    const readOnly = Object.values(tools).filter((tool) => tool.readOnly === true);
    expect(readOnly.map((tool) => tool.name)).toEqual(["task_output", "task_list"]);
    expect(readOnly.every((tool) => tool.concurrencySafe === true)).toBe(true);
    expect(tools.task_start!.permissionSubject?.({ command: "npm test" }, context)).toEqual({
      kind: "command",
      command: "npm test",
    });
  });

  it("start, read with offsets until the end, answer a prompt, stop and list", async () => {
    const id = idOf(
      await call("task_start", {
        command: "printf 'Proceed? (y/n) '; read a; echo \"got $a, and a longer line\"",
      }),
    );
    await waitForNotification(manager, (n) => n.taskId === id && n.kind === "stalled");
    expect(await call("task_input", { id, input: "y\n" })).toBe(`Sent "y\\n" to task ${id}.`);
    await manager.wait(id, { timeoutMs: 45_000 });
    expect(await call("task_output", { id })).toBe(
      "Proceed? (y/n) g\n---\nnext_offset: 16 (completed; 40 B of output so far). Call task_output again with this offset for more.",
    );
    expect((await call("task_output", { id, offset: 16 })).startsWith("ot y, and a long")).toBe(true);
    expect(await call("task_output", { id, offset: 32 })).toBe(
      "er line\n\n---\nThe task has ended (completed, exit code 0) and all 40 B of its output has been read.",
    );
    const past = await refused("task_output", { id, offset: 41 });
    expect(past.content).toMatch(/41 is past the end .* which is 40 bytes so far/);

    const sleeper = idOf(await call("task_start", { command: "sleep 30", description: "a long sleep" }));
    expect(await call("task_list", {})).toMatch(
      new RegExp(`- ${sleeper} \\(local_bash\\) a long sleep — running for`),
    );
    expect(await call("task_stop", { id: sleeper })).toBe(`Stopped task ${sleeper}.`);
    expect(await call("task_stop", { id: sleeper })).toBe(`Task ${sleeper} had already ended (killed).`);
  });

  it("run commands in the session's directory, and a relative cwd against it", async () => {
    await mkdir(join(dir, "sub"));
    const here = idOf(await call("task_start", { command: "pwd" }));
    const sub = idOf(await call("task_start", { command: "pwd", cwd: "sub" }));
    await manager.wait(here, { timeoutMs: 45_000 });
    await manager.wait(sub, { timeoutMs: 45_000 });
    expect(await readAllOutput(manager, here)).toBe(`${dir}\n`);
    expect(await readAllOutput(manager, sub)).toBe(`${join(dir, "sub")}\n`);
  });

  it("answer invalid input with an error result that names the field and the fix", async () => {
    expect((await refused("task_start", {})).content).toMatch(/"command" is required/);
    expect((await refused("task_start", { command: "ls", timeout: 5 })).content).toMatch(
      /unknown field "timeout"; the fields are command, description, cwd, timeout_ms, deadline_ms/,
    );
    expect((await refused("task_output", { id: "bash-x", offset: -3 })).content).toMatch(
      /must be a whole number ≥ 0/,
    );
    expect((await refused("task_output", { id: "bash-doesnotexist" })).content).toMatch(
      /No task "bash-doesnotexist"/,
    );
    expect((await refused("task_input", { id: "bash-x" })).content).toMatch(/"input" is required/);
    expect((await refused("task_stop", "bash-x")).content).toMatch(/must be a JSON object/);
    expect((await refused("task_start", { command: "ls", cwd: "/definitely/not/here" })).content).toMatch(
      /not an existing directory/,
    );
  });
});
