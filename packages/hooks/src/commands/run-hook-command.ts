export interface RunHookCommandOptions {
  /** Shell command line, run with the system shell. */
  command: string;
  /** Written to the command's stdin, then stdin is closed. */
  input: string;
  cwd: string;
  env: Record<string, string | undefined>;
  /** After this, the whole process group gets SIGTERM, then SIGKILL after `killGraceMs`. */
  timeoutMs: number;
  /** Time between SIGTERM and SIGKILL of the process group. Default 1000. */
  killGraceMs?: number;
  /** Bytes kept of stdout and of stderr each; the rest is dropped. Default 1 MiB. */
  maxOutputBytes?: number;
}

export interface HookCommandRun {
  /** The shell's exit code; null when it was killed by a signal or never started. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** Set when the shell could not be started at all. */
  spawnError?: Error;
}

/** setTimeout fires at once for delays above 2^31 - 1 ms (about 24.8 days); longer timeouts are capped to it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // A negative pid addresses the process group the detached shell leads: its children die with it.
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs one hook command in its own process group, feeds it the event JSON on stdin and collects its output.
 * Never rejects: a command that cannot start, fails or hangs is described in the result.
 */
export function runHookCommand(options: RunHookCommandOptions): Promise<HookCommandRun> {
  const started = performance.now();
  const maxBytes = options.maxOutputBytes ?? 1024 * 1024;
  return new Promise((resolve) => {
    // child_process loads with the first hook command run, not with every session (start-up).
    const child = process.getBuiltinModule("node:child_process").spawn(options.command, {
      shell: true,
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let timedOut = false;
    let settled = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdoutBytes < maxBytes) stdout.push(chunk.subarray(0, maxBytes - stdoutBytes));
      stdoutBytes += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderrBytes < maxBytes) stderr.push(chunk.subarray(0, maxBytes - stderrBytes));
      stderrBytes += chunk.length;
    });
    const finish = (exitCode: number | null, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const run: HookCommandRun = {
        exitCode,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        timedOut,
        durationMs: performance.now() - started,
      };
      if (spawnError !== undefined) run.spawnError = spawnError;
      resolve(run);
    };
    const timer = setTimeout(
      () => {
        if (child.pid === undefined) return;
        const pid = child.pid;
        timedOut = true;
        killGroup(pid, "SIGTERM");
        setTimeout(() => killGroup(pid, "SIGKILL"), options.killGraceMs ?? 1000).unref();
      },
      Math.min(options.timeoutMs, MAX_TIMER_MS),
    );
    child.on("error", (error) => finish(null, error));
    // "close" waits for every holder of the pipes, so a backgrounded grandchild is covered by the timeout too.
    child.on("close", (code) => finish(code));
    child.stdin.on("error", () => {
      // The command did not read its stdin; that is allowed.
    });
    child.stdin.end(options.input);
  });
}
