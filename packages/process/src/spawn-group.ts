import type { ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { basename } from "node:path";
import type { ProcessIdentity } from "./process-identity.ts";
import { readProcessStartTime } from "./process-identity.ts";

/** Runs commands given as strings; bash where it exists, as an agent's shell commands expect. */
export const DEFAULT_SHELL = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

/** How `spawnGroup` starts a process group. */
export interface SpawnGroupOptions {
  /** Its working directory (default: this process's). */
  cwd?: string;
  /** Added to `baseEnv`, as given. */
  env?: Record<string, string>;
  /** The environment `env` is added to (default: this process's). */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** The output file: stderr is appended to it, and stdout too unless `stdout` is "pipe". */
  outputPath: string;
  /** "pipe" hands stdout to the caller as `child.stdout` (an MCP server's protocol stream). */
  stdout?: "output" | "pipe";
}

/** A process group that `spawnGroup` started, led by `child`. */
export interface GroupChild {
  /** The group's leader; its stdin is a pipe the caller holds. */
  child: ChildProcess;
  /** Undefined when the process could not be started (the child then emits "error"). */
  identity: ProcessIdentity | undefined;
  /** Resolves when the leader has exited: its code, or the signal that killed it, or the start error. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
}

/**
 * Starts `file args` as the leader of a new process group and session: signals to the group reach every
 * process it starts, and it has no controlling terminal. stdin is a pipe held by the caller.
 */
export function spawnGroup(file: string, args: readonly string[], options: SpawnGroupOptions): GroupChild {
  const output = openSync(options.outputPath, "a");
  let child: ChildProcess;
  try {
    // child_process loads with the first process started, not with the package (start-up).
    child = process.getBuiltinModule("node:child_process").spawn(file, args, {
      cwd: options.cwd,
      env: { ...(options.baseEnv ?? process.env), ...options.env },
      detached: true,
      stdio: ["pipe", options.stdout === "pipe" ? "pipe" : output, output],
    });
  } finally {
    // The child holds its own copy of the descriptor; the caller never reads or buffers that stream.
    closeSync(output);
  }
  // EPIPE once the process has exited: callers that write learn it from their write callback.
  child.stdin?.on("error", () => undefined);
  const pid = child.pid;
  const startTime = pid === undefined ? undefined : readProcessStartTime(pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once("error", (error) => {
        if (pid === undefined) resolve({ code: null, signal: null, error });
      });
      child.once("exit", (code, signal) => {
        child.stdin?.destroy();
        resolve({ code, signal });
      });
    },
  );
  return {
    child,
    identity: pid !== undefined && startTime !== undefined ? { pid, startTime } : undefined,
    exited,
  };
}

/**
 * The argv that runs `command` in `shell`. Bash gets `--norc --noprofile`: its stdin is a socket (how Node
 * makes pipes), and bash sources ~/.bashrc when stdin is a socket and SHLVL is unset, as under a task
 * runner that clears the environment; a .bashrc that waits for the terminal would hang the task.
 */
export function shellCommandLine(command: string, shell = DEFAULT_SHELL): string[] {
  return basename(shell) === "bash"
    ? [shell, "--norc", "--noprofile", "-c", command]
    : [shell, "-c", command];
}

/** Starts a shell command as a process group (see `spawnGroup`). */
export function spawnShellCommand(
  command: string,
  options: SpawnGroupOptions & { shell?: string },
): GroupChild {
  const [file, ...args] = shellCommandLine(command, options.shell);
  return spawnGroup(file!, args, options);
}
