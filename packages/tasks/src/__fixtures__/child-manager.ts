import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { signalGroup } from "@unforget/process";

const PACKAGE_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Child managers and the task groups they reported, ended by `killChildManagers` even when a test fails. */
const started = new Set<{ child: ChildProcess; taskGroups: number[] }>();

/** Runs manager-process.ts in a child Node process; `next()` resolves with each JSON line it prints. */
export function startChildManager(
  dir: string,
  mode: "hold" | "measure" | "agent",
  command: string,
  leaseMs?: number,
) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      fileURLToPath(new URL("./manager-process.mjs", import.meta.url)),
      dir,
      mode,
      command,
      ...(leaseMs === undefined ? [] : [String(leaseMs)]),
    ],
    { cwd: PACKAGE_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const entry = { child, taskGroups: [] as number[] };
  started.add(entry);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    async next<T>(): Promise<T> {
      const { value, done } = await lines.next();
      if (done) throw new Error("the child manager exited before printing what the test waited for");
      const message = JSON.parse(value as string) as T & { pid?: number };
      if (typeof message.pid === "number") entry.taskGroups.push(message.pid);
      return message;
    },
  };
}

/** SIGKILLs every child manager still running and the process groups of the tasks they started. */
export function killChildManagers(): void {
  for (const { child, taskGroups } of started) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
    for (const pgid of taskGroups) signalGroup(pgid, "SIGKILL");
  }
  started.clear();
}

export const PRINT_LINES = fileURLToPath(new URL("./print-lines.mjs", import.meta.url));
