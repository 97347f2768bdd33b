import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@unforget/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToolHarness, processesWith, type ToolHarness } from "./__fixtures__/tool-harness.ts";
import { createBuiltinTools } from "./builtin-tools.ts";

/** What either implementation answered: its text, and whether it was an error. */
interface Answer {
  isError: boolean;
  text: string;
}

interface RunnableTool {
  name: string;
  run(input: Record<string, unknown>, context?: { signal?: AbortSignal }): Promise<unknown> | unknown;
  close?(): unknown;
}

const nodeMajor = Number(process.versions.node.split(".")[0]);

/**
 * The same inputs through our tools and Anthropic's `agent_toolset_20260401` implementation
 * (`@anthropic-ai/sdk/tools/agent-toolset/node`), which needs Node 22 (`fs.glob`): CI runs this on Node 22 and 24.
 * Where the answers differ on purpose, decision 0016 says why.
 */
if (nodeMajor < 22) {
  console.info(
    `Comparison with Anthropic's agent toolset skipped: it needs Node 22 or later (fs.glob), this is Node ${process.versions.node}; .ci/node-versions runs it on 22 and 24.`,
  );
}
describe.skipIf(nodeMajor < 22)("ours and Anthropic's agent toolset, on the same inputs", () => {
  let top: string;
  let harness: ToolHarness;
  let ours: Tool[];
  let theirs: RunnableTool[];

  beforeAll(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), "unforget-compare-")));
    const cwd = top;
    await mkdir(join(cwd, "work", "sub"), { recursive: true });
    await mkdir(join(cwd, "outside"));
    await writeFile(join(cwd, "outside", "secret.txt"), "secret\n");
    await writeFile(join(cwd, "work", "notes.txt"), "alpha\nbeta\nalpha\n");
    await writeFile(join(cwd, "work", "big.txt"), `${"0123456789abcdef\n".repeat(20_000)}`);
    await symlink(join(cwd, "outside"), join(cwd, "work", "out-dir"));
    await symlink(join(cwd, "outside", "secret.txt"), join(cwd, "work", "out-leaf"));
    await symlink(join(cwd, "outside", "planted.txt"), join(cwd, "work", "dangling"));
    execFileSync("mkfifo", [join(cwd, "work", "pipe")]);
    const workdir = join(cwd, "work");
    const module = (await import("@anthropic-ai/sdk/tools/agent-toolset/node")) as unknown as {
      betaAgentToolset20260401(context: { workdir: string; allowedRoots?: string[] }): RunnableTool[];
    };
    theirs = module.betaAgentToolset20260401({ workdir, allowedRoots: ["/dev"] });
    ours = createBuiltinTools({ additionalDirectories: ["/dev"] });
    // Our tools take the session's working directory from each call; Anthropic's from their context.
    harness = await createToolHarness("", workdir);
  });

  afterAll(async () => {
    for (const tool of theirs ?? []) await tool.close?.();
    await rm(top, { recursive: true, force: true });
  });

  async function ourAnswer(name: string, input: Record<string, unknown>): Promise<Answer> {
    const tool = ours.find((each) => each.name === name)!;
    const output = await harness.call(tool, input);
    return { isError: output.isError, text: harness.text(output) };
  }

  async function theirAnswer(name: string, input: Record<string, unknown>): Promise<Answer> {
    const tool = theirs.find((each) => each.name === name)!;
    try {
      const result = await tool.run(input, { signal: new AbortController().signal });
      return { isError: false, text: typeof result === "string" ? result : JSON.stringify(result) };
    } catch (error) {
      return { isError: true, text: error instanceof Error ? error.message : String(error) };
    }
  }

  it.each([
    ["..", "../outside/secret.txt"],
    ["an absolute path elsewhere", "/etc/passwd"],
    ["a symlinked folder that leads out", "out-dir/secret.txt"],
    ["a leaf symlink that leads out", "out-leaf"],
    ["a dangling leaf symlink", "dangling"],
  ])("both refuse to read through %s", async (_, path) => {
    expect((await ourAnswer("Read", { file_path: path })).isError).toBe(true);
    expect((await theirAnswer("read", { file_path: path })).isError).toBe(true);
  });

  it("both refuse to write through a dangling leaf symlink, and nothing is planted outside", async () => {
    expect((await ourAnswer("Write", { file_path: "dangling", content: "x" })).isError).toBe(true);
    expect((await theirAnswer("write", { file_path: "dangling", content: "x" })).isError).toBe(true);
    await expect(readFile(join(harness.cwd, "..", "outside", "planted.txt"))).rejects.toThrow();
  });

  it("both refuse a whole read over 256 KiB and say how to read a part, and both read the part", async () => {
    const ourRefusal = await ourAnswer("Read", { file_path: "big.txt" });
    const theirRefusal = await theirAnswer("read", { file_path: "big.txt" });
    expect(ourRefusal.isError && theirRefusal.isError).toBe(true);
    expect(ourRefusal.text).toContain("offset and limit");
    expect(theirRefusal.text).toContain("view_range");
    expect((await ourAnswer("Read", { file_path: "big.txt", offset: 3, limit: 1 })).text).toBe(
      "     3\t0123456789abcdef\n\n(Lines 3–3 of 20000. Read on with offset 4.)",
    );
    expect((await theirAnswer("read", { file_path: "big.txt", view_range: [3, 3] })).text).toBe(
      "0123456789abcdef",
    );
  });

  it("both refuse FIFOs and devices without blocking", async () => {
    for (const path of ["pipe", "/dev/zero"]) {
      expect((await ourAnswer("Read", { file_path: path })).isError).toBe(true);
      expect((await theirAnswer("read", { file_path: path })).isError).toBe(true);
    }
  });

  it("both refuse an old_string that is not unique; ours also wants the file read first", async () => {
    const edit = { file_path: "notes.txt", old_string: "alpha", new_string: "gamma" };
    expect((await ourAnswer("Edit", edit)).text).toContain("has not been read in this session");
    await ourAnswer("Read", { file_path: "notes.txt" });
    const ourRefusal = await ourAnswer("Edit", edit);
    const theirRefusal = await theirAnswer("edit", edit);
    expect(ourRefusal.isError && theirRefusal.isError).toBe(true);
    expect(ourRefusal.text).toContain("occurs 2 times");
    expect(theirRefusal.text).toContain("appears 2 times");
    expect(await readFile(join(harness.cwd, "notes.txt"), "utf8")).toBe("alpha\nbeta\nalpha\n");
  });

  it("both keep the working directory between commands; only Anthropic's keeps variables", async () => {
    await ourAnswer("Bash", { command: "cd sub && export MARK=kept" });
    await theirAnswer("bash", { command: "cd sub && export MARK=kept" });
    expect(
      (await ourAnswer("Bash", { command: 'echo "$(basename "$PWD") $(printenv MARK || echo unset)"' })).text,
    ).toBe("sub unset");
    expect(
      (await theirAnswer("bash", { command: 'echo "$(basename "$PWD") $(printenv MARK || echo unset)"' }))
        .text,
    ).toBe("sub kept");
  });

  it("both stop a command at its timeout, with the processes it started, and run the next command", async () => {
    const ourTimeout = await ourAnswer("Bash", { command: "sleep 3600.5101 & wait", timeout: 500 });
    const theirTimeout = await theirAnswer("bash", { command: "sleep 3600.5102 & wait", timeout_ms: 500 });
    expect(ourTimeout.isError && theirTimeout.isError).toBe(true);
    expect(ourTimeout.text).toContain("timed out after 500 ms");
    expect(theirTimeout.text).toContain("timed out after 500ms");
    // Anthropic's shell kills its group without waiting: give the kernel a moment to reap it.
    await expect.poll(() => processesWith("sleep 3600.510"), { timeout: 30_000 }).toEqual([]);
    expect((await ourAnswer("Bash", { command: "echo again" })).text).toBe("again");
    expect((await theirAnswer("bash", { command: "echo again" })).text).toBe("again");
  });

  it("both keep ANTHROPIC_* out of commands; ours keeps AWS and Google credentials out too", async () => {
    process.env.ANTHROPIC_API_KEY = "sk-ant-secret";
    process.env.AWS_SECRET_ACCESS_KEY = "aws-secret";
    try {
      // Anthropic's shell was started before: restart it so that it sees the variables.
      await theirAnswer("bash", { restart: true });
      const print = {
        command: "printenv ANTHROPIC_API_KEY || echo none; printenv AWS_SECRET_ACCESS_KEY || echo none",
      };
      expect((await ourAnswer("Bash", print)).text).toBe("none\nnone");
      expect((await theirAnswer("bash", print)).text).toBe("none\naws-secret");
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.AWS_SECRET_ACCESS_KEY;
    }
  });
});
