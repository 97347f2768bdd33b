import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { groupExists, readProcessIdentity } from "@unforget/process";
import { createTaskManager, TASK_TOOL_NAMES } from "@unforget/tasks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolHarness, processesWith, type ToolHarness } from "../__fixtures__/tool-harness.ts";
import { createBuiltinTools } from "../builtin-tools.ts";
import { allowDirectories } from "../paths/session-directories.ts";
import { createBashTool } from "./bash-tool.ts";

/** Waits (without a deadline of its own: the test's timeout is the limit) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(20);
}

/** A live process has this pid: an exited one that is not reaped yet (a zombie) does not count. */
function isAlive(pid: number): boolean {
  return readProcessIdentity(pid) !== undefined;
}

describe("Bash", () => {
  let harness: ToolHarness;
  let outputDir: string;

  beforeEach(async () => {
    harness = await createToolHarness();
    outputDir = await mkdtemp(join(tmpdir(), "unforget-bash-out-"));
  });
  afterEach(async () => {
    await harness.close();
    await rm(outputDir, { recursive: true, force: true });
  });

  it("returns stdout and stderr together, an exit code as an error, and leaves no output file", async () => {
    const bash = createBashTool({ outputDir });
    expect(await harness.call(bash, { command: "echo out; echo err >&2" })).toEqual({
      content: "out\nerr",
      isError: false,
    });
    expect(await harness.call(bash, { command: "echo failing; exit 3" })).toEqual({
      content: "failing\n\nExit code 3.",
      isError: true,
    });
    expect(await harness.call(bash, { command: "true" })).toEqual({ content: "(no output)", isError: false });
    expect(await readdir(outputDir)).toEqual([]);
  });

  it("keeps the working directory between calls, but not variables, and stays within the session's folders", async () => {
    const bash = createBashTool({ outputDir });
    await mkdir(join(harness.cwd, "sub"));
    await harness.call(bash, { command: "cd sub && export FOO=bar" });
    expect(harness.text(await harness.call(bash, { command: 'pwd; echo "FOO=$FOO"' }))).toBe(
      `${join(harness.cwd, "sub")}\nFOO=`,
    );
    const escaped = await harness.call(bash, { command: "cd /" });
    expect(harness.text(escaped)).toBe(
      `(no output)\n\nThe command moved to /, outside the session's folders; the shell's working directory was reset to ${harness.cwd}.`,
    );
    expect(harness.text(await harness.call(bash, { command: "pwd" }))).toBe(harness.cwd);
    const other = await realpath(await mkdtemp(join(tmpdir(), "unforget-extra-")));
    const wider = createBashTool({ outputDir, additionalDirectories: [other] });
    await harness.call(wider, { command: `cd ${other}` });
    expect(harness.text(await harness.call(wider, { command: "pwd" }))).toBe(other);
    await rm(other, { recursive: true });
    const gone = await harness.call(wider, { command: "pwd" });
    expect(harness.text(gone)).toBe(
      `${harness.cwd}\n\nThe shell's working directory ${other} no longer exists; this command ran in ${harness.cwd}.`,
    );
    const granted = await realpath(await mkdtemp(join(tmpdir(), "unforget-granted-")));
    allowDirectories(harness.state, [granted]);
    await harness.call(bash, { command: `cd ${granted}` });
    expect(harness.text(await harness.call(bash, { command: "pwd" }))).toBe(granted);
    await rm(granted, { recursive: true });
  });

  it("stops the whole process group at the timeout and says how to give it longer", async () => {
    const bash = createBashTool({ outputDir, killGraceMs: 200 });
    const output = await harness.call(bash, { command: "sleep 3600.4217 & wait", timeout: 300 });
    expect(output.isError).toBe(true);
    expect(harness.text(output)).toBe(
      "The command timed out after 300 ms and was stopped, with every process it started. Give it a longer timeout (at most 600000 ms), or start it with run_in_background. Its output until then:\n\n(no output)",
    );
    expect(await processesWith("sleep 3600.4217")).toEqual([]);
  });

  it("stops the process group when the call is aborted mid-command", async () => {
    const bash = createBashTool({ outputDir, killGraceMs: 200 });
    const controller = new AbortController();
    const running = harness.call(
      bash,
      { command: "echo $$ > shell.pid; sleep 60 & echo $! > child.pid; wait" },
      controller.signal,
    );
    await until(async () => (await readdir(harness.cwd)).includes("child.pid"));
    const shell = Number.parseInt(await readFile(join(harness.cwd, "shell.pid"), "utf8"), 10);
    controller.abort();
    const output = await running;
    expect(output.isError).toBe(true);
    expect(harness.text(output)).toContain(
      "The command was interrupted and stopped, with every process it started.",
    );
    expect(groupExists(shell)).toBe(false);
    expect(isAlive(Number.parseInt(await readFile(join(harness.cwd, "child.pid"), "utf8"), 10))).toBe(false);
  });

  it("stops what a command leaves running in the background when it ends", async () => {
    const bash = createBashTool({ outputDir, killGraceMs: 200 });
    const output = await harness.call(bash, { command: "sleep 60 & echo $! > child.pid" });
    expect(harness.text(output)).toContain(
      "Processes the command left running in the background were stopped",
    );
    expect(isAlive(Number.parseInt(await readFile(join(harness.cwd, "child.pid"), "utf8"), 10))).toBe(false);
  });

  it("keeps provider credentials out of commands unless allowed by name", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      ANTHROPIC_API_KEY: "sk-ant-secret",
      anthropic_auth_token: "lower",
      AWS_SECRET_ACCESS_KEY: "aws-secret",
      AWS_PROFILE: "work",
      GOOGLE_APPLICATION_CREDENTIALS: "/keys/sa.json",
      UNFORGET_HARMLESS: "kept",
    });
    try {
      const bash = createBashTool({
        outputDir,
        allowEnv: ["AWS_PROFILE"],
        env: { EXTRA: "added", GOOGLE_APPLICATION_CREDENTIALS: "/keys/for-commands.json" },
      });
      const output = harness.text(await harness.call(bash, { command: "env | sort" }));
      expect(output).not.toMatch(/ANTHROPIC|anthropic|AWS_SECRET|sa\.json/);
      expect(output).toContain("GOOGLE_APPLICATION_CREDENTIALS=/keys/for-commands.json");
      expect(output).toContain("AWS_PROFILE=work");
      expect(output).toContain("UNFORGET_HARMLESS=kept");
      expect(output).toContain("EXTRA=added");
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    }
  });

  it("cuts long output in the middle and keeps the whole of it in a file the file tools can read", async () => {
    const tools = createBuiltinTools({ bash: { outputDir, maxOutputChars: 2_000 } });
    const bash = tools.find((tool) => tool.name === "Bash")!;
    const read = tools.find((tool) => tool.name === "Read")!;
    const output = harness.text(await harness.call(bash, { command: "seq 1 5000" }));
    expect(output.startsWith("1\n2\n3\n")).toBe(true);
    expect(output.endsWith("4999\n5000")).toBe(true);
    const path = /is in (\S+): read parts/.exec(output)?.[1];
    expect(path).toBeDefined();
    const part = await harness.call(read, { file_path: path!, offset: 2500, limit: 1 });
    expect(harness.text(part)).toContain("  2500\t2500");
    expect(output.length).toBeLessThan(2_500);
  });

  it("stops a command whose output passes the disk limit", async () => {
    const bash = createBashTool({ outputDir, maxOutputFileBytes: 100_000, maxOutputChars: 200 });
    const output = await harness.call(bash, { command: "yes" });
    expect(output.isError).toBe(true);
    expect(harness.text(output)).toContain("The command was stopped: its output passed 97.7 KiB.");
    // The kept output is cut back to the limit.
    const [kept] = await readdir(outputDir);
    expect((await stat(join(outputDir, kept!))).size).toBe(100_000);
  });

  it("starts run_in_background commands as tasks, with the same working directory and without credentials", async () => {
    const tasksDir = await mkdtemp(join(tmpdir(), "unforget-bash-tasks-"));
    const tasks = await createTaskManager({ dir: tasksDir });
    process.env.ANTHROPIC_API_KEY = "sk-ant-secret";
    try {
      const bash = createBashTool({ outputDir, tasks });
      expect(bash.inputSchema).toHaveProperty(["properties", "run_in_background"]);
      await mkdir(join(harness.cwd, "sub"));
      await harness.call(bash, { command: "cd sub" });
      const started = harness.text(
        await harness.call(bash, {
          command: 'pwd; echo "key=$(printenv ANTHROPIC_API_KEY || echo none)"',
          run_in_background: true,
          description: "print where",
        }),
      );
      const id = /task (\S+)\./.exec(started)?.[1];
      expect(started).toContain("You will be told when it ends; read its output with task_output");
      // The names the tool gives the model are the task tools' own.
      expect(started).toContain(
        `with ${TASK_TOOL_NAMES.output} (id ${id}) and stop it with ${TASK_TOOL_NAMES.stop}`,
      );
      expect(bash.description).toContain(TASK_TOOL_NAMES.output);
      const info = await tasks.wait(id!);
      expect(info.status).toBe("completed");
      const chunk = await tasks.readOutput(id!);
      expect(chunk.data).toBe(`${join(harness.cwd, "sub")}\nkey=none\n`);
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      await tasks.close();
      await rm(tasksDir, { recursive: true, force: true });
    }
  });

  it("has no run_in_background without a task manager, and tells rules the command", () => {
    const bash = createBashTool({ outputDir });
    expect(bash.inputSchema).not.toHaveProperty(["properties", "run_in_background"]);
    expect(bash.permissionSubject?.({ command: "npm test" }, { cwd: "/repo" })).toEqual({
      kind: "command",
      command: "npm test",
    });
    expect(bash.timeoutMs).toBeGreaterThan(600_000);
  });

  it("refuses run_in_background without a task manager, as an error the model reads, and runs nothing", async () => {
    const bash = createBashTool({ outputDir });
    const refused = await harness.call(bash, { command: "touch started", run_in_background: true });
    expect(refused).toMatchObject({
      isError: true,
      content: expect.stringMatching(/run_in_background is not available/),
    });
    await expect(stat(join(harness.cwd, "started"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});
