import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const PACKAGE_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const started = new Set<ChildProcess>();
/** Process groups of tasks the tests saw, killed with the children even when a test fails. */
export const taskGroups = new Set<number>();

export interface ChildHandle {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The next JSON line it prints that matches (the others are skipped). */
  next<T>(matches?: (value: T) => boolean): Promise<T>;
}

/** Runs a fixture script in a child Node process; its JSON lines are read with `next()`. */
export function startChild(script: string, args: string[], env: Record<string, string> = {}): ChildHandle {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url)), ...args], {
    cwd: PACKAGE_ROOT,
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  started.add(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    async next<T>(matches: (value: T) => boolean = () => true): Promise<T> {
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error(`${script} exited before printing what the test waited for`);
        const parsed = JSON.parse(value as string) as T;
        if (matches(parsed)) return parsed;
      }
    },
  };
}

/** Ends every child still running (SIGCONT first, in case a test paused it) and the task groups seen. */
export function killChildren(): void {
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
  }
  started.clear();
  for (const pgid of taskGroups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  taskGroups.clear();
}

/** True while any process of the group exists (a zombie leader counts until it is reaped). */
export function isProcessGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
