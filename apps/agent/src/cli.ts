#!/usr/bin/env node
import { isUnforgetError } from "@unforget/core";
import { CommanderError } from "commander";
import { createProgram } from "./cli-program.ts";

/** Runs the command line; resolves to the exit code. Errors become one clear message, never a stack trace. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram({ stdout: process.stdout, stderr: process.stderr, env: process.env });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (isUnforgetError(error)) {
      process.stderr.write(`unforget: ${error.message}\n`);
      return error.code === "replay_option" ? 2 : 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `unforget: unexpected failure: ${message}\nThis is a bug in unforget; set UNFORGET_DEBUG=1 to see where it happened and please report it.\n`,
    );
    if (process.env.UNFORGET_DEBUG && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    return 70;
  }
}

process.exitCode = await main(process.argv.slice(2));
