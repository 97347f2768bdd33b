import { isUnforgetError } from "@unforget/core";
import { CommanderError } from "commander";
import { createProgram } from "./cli-program.ts";
import type { CommandOutput } from "./replay-command.ts";

/** Exit code of a failure that is a bug in unforget (EX_SOFTWARE). */
export const EXIT_BUG = 70;

/**
 * Runs the command line and resolves to the exit code: 0 on success, 2 for a wrong option, 1 for any
 * other error, or the code the command chose (replay: 3 for overflows, 4 for broken invariants). Errors
 * become one clear message on stderr, never a stack trace.
 */
export async function main(argv: readonly string[], output: CommandOutput): Promise<number> {
  const result = { exitCode: 0 };
  const program = createProgram(output, result);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return result.exitCode;
  } catch (error) {
    // Commander has printed its message; a wrong command line exits 2, like a wrong option value.
    if (error instanceof CommanderError)
      return error.exitCode === 0 || error.code === "commander.help" ? error.exitCode : 2;
    if (isUnforgetError(error)) {
      output.stderr.write(`unforget: ${error.message}\n`);
      return error.code === "replay_option" ? 2 : 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    output.stderr.write(
      `unforget: unexpected failure: ${message}\nThis is a bug in unforget; set UNFORGET_DEBUG=1 to see where it happened, and please report it.\n`,
    );
    if (output.env.UNFORGET_DEBUG && error instanceof Error && error.stack)
      output.stderr.write(`${error.stack}\n`);
    return EXIT_BUG;
  }
}
