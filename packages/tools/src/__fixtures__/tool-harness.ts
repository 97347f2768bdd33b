import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool, ToolContext, ToolOutput, ToolSessionState } from "@unforget/core";

/** A session's side of tool calls in tests: one working directory, one tool state, numbered call ids. */
export interface ToolHarness {
  readonly cwd: string;
  readonly state: ToolSessionState;
  /** Calls `tool` as the session would, with a fresh tool_use id. */
  call(tool: Tool, input: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutput>;
  /** The text of a result (text blocks joined). */
  text(output: ToolOutput): string;
  close(): Promise<void>;
}

/** A harness in a new temporary folder, or in `cwd` (which the caller then removes). */
export async function createToolHarness(prefix = "unforget-tools-", cwd?: string): Promise<ToolHarness> {
  const owned = cwd === undefined;
  cwd ??= await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const state: ToolSessionState = new Map();
  let calls = 0;
  return {
    cwd,
    state,
    call(tool, input, signal = new AbortController().signal) {
      const context: ToolContext = {
        signal,
        sessionId: "session-test",
        toolUseId: `toolu_${++calls}`,
        cwd,
        sessionState: state,
      };
      return tool.execute(input, context);
    },
    text(output) {
      if (typeof output.content === "string") return output.content;
      return output.content
        .map((block) => (block.type === "text" ? block.text : `[${block.type}]`))
        .join("\n");
    },
    close: async () => {
      if (owned) await rm(cwd, { recursive: true, force: true });
    },
  };
}

/** Runs git in `cwd` with a fixed identity, so commits work on any machine. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * The pids of running processes whose command line contains `marker` (read from /proc): a test gives a command
 * a unique marker (`sleep 3600.4217`) and checks that nothing carrying it outlives the call, whether or not the
 * command got to start it.
 */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const status = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // A zombie has ended; only its parent has not collected it yet.
    if (commandLine.split("\u0000").join(" ").includes(marker) && !/\) Z /.test(status))
      pids.push(Number(entry));
  }
  return pids;
}
