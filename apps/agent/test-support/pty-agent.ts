import { stripVTControlCharacters } from "node:util";
import { CLI_PATH } from "./run-cli.ts";

/** Keys as a terminal sends them. */
export const KEYS = { enter: "\r", ctrlC: "\u0003", ctrlD: "\u0004", escape: "\u001b" } as const;

/** The real CLI in a pseudo-terminal: what it draws, and a keyboard. */
export interface PtyAgent {
  /** Everything drawn so far, without escape sequences. */
  readonly screen: string;
  /** A position in the output: `waitFor` after it ignores what was drawn before. */
  mark(): number;
  /** Resolves with the output after `from` once it matches (polls; fails only when it never comes). */
  waitFor(pattern: string | RegExp, options?: { from?: number; timeoutMs?: number }): Promise<string>;
  /** Types text, then waits for the prompt line to show it (keys typed too early would be lost). */
  type(text: string): Promise<void>;
  /** Sends raw keys. */
  press(keys: string): void;
  /** Types a line and presses Enter. */
  send(line: string): Promise<void>;
  readonly exited: Promise<number>;
  kill(): void;
}

/** Starts `unforget` in a pseudo-terminal (`@lydell/node-pty`) and waits for the prompt. */
export async function startPtyAgent(options: {
  cwd: string;
  env: Record<string, string>;
  args?: string[];
  cols?: number;
  rows?: number;
  /** Text that means the agent is ready; default the prompt's placeholder. */
  ready?: string | RegExp | false;
}): Promise<PtyAgent> {
  const pty = await import("@lydell/node-pty");
  const child = pty.spawn(process.execPath, [CLI_PATH, ...(options.args ?? [])], {
    name: "xterm-256color",
    cols: options.cols ?? 120,
    rows: options.rows ?? 40,
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm-256color", ...options.env },
  });
  let raw = "";
  child.onData((data) => {
    raw += data;
  });
  const exited = new Promise<number>((resolve) => child.onExit((event) => resolve(event.exitCode)));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const agent: PtyAgent = {
    get screen() {
      return stripVTControlCharacters(raw);
    },
    mark: () => raw.length,
    async waitFor(pattern, { from = 0, timeoutMs = 50_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = stripVTControlCharacters(raw.slice(from));
        if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) return text;
        if (done || Date.now() > deadline) {
          throw new Error(
            `The screen never showed ${String(pattern)}${done ? " (the CLI exited)" : ""}. It showed:\n${text.slice(-3000)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async type(text) {
      const from = raw.length;
      child.write(text);
      await agent.waitFor(text.slice(-Math.min(text.length, 20)), { from });
    },
    press(keys) {
      child.write(keys);
    },
    async send(line) {
      await agent.type(line);
      child.write(KEYS.enter);
    },
    exited,
    kill: () => {
      if (!done) child.kill();
    },
  };
  if (options.ready !== false) await agent.waitFor(options.ready ?? "ask, or /help");
  return agent;
}
