import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const PACKAGE_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs manager-process.ts in a child Node process; `next()` resolves with each JSON line it prints. */
export function startChildManager(dir: string, mode: "hold" | "measure", command: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(new URL("./manager-process.ts", import.meta.url)), dir, mode, command],
    { cwd: PACKAGE_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    async next<T>(): Promise<T> {
      const { value, done } = await lines.next();
      if (done) throw new Error("the child manager exited before printing what the test waited for");
      return JSON.parse(value as string) as T;
    },
  };
}

export const PRINT_LINES = fileURLToPath(new URL("./print-lines.mjs", import.meta.url));
