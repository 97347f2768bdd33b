import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { main } from "../src/main.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command line in this process (the real program, output captured). */
export async function runInProcess(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: false },
    env,
  });
  return { code, stdout, stderr };
}

/** The built CLI, as users run it. */
export const CLI_PATH = fileURLToPath(new URL("../dist/bundle/cli.js", import.meta.url));

/** Runs the built CLI as a separate process, with the given environment only (plus PATH). */
export function runCliProcess(
  argv: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; stdin?: string } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...argv], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.env },
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin?.end(options.stdin);
  });
}
