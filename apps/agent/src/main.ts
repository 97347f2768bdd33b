import { isUnforgetError } from "@unforget/core";
import { CommanderError } from "commander";
import type { AgentIO } from "./agent/agent-command.ts";
import { createProgram } from "./cli-program.ts";

/** Errors of a command line the program cannot use: exit code 2, as for a wrong option. */
const USAGE_ERRORS: ReadonlySet<string> = new Set(["replay_option", "agent_usage"]);

/** Exit code of a failure that is a bug in unforget (EX_SOFTWARE). */
export const EXIT_BUG = 70;

/**
 * Runs the command line and resolves to the exit code: 0 on success, 2 for a wrong option, 1 for any
 * other error, or the code the command chose (replay: 3 for overflows, 4 for broken invariants). Errors
 * become one clear message on stderr, never a stack trace.
 */
export async function main(argv: readonly string[], output: AgentIO): Promise<number> {
  const program = createProgram(output);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return output.exitCode ?? 0;
  } catch (error) {
    // Commander has printed its message; a wrong command line exits 2, like a wrong option value.
    if (error instanceof CommanderError)
      return error.exitCode === 0 || error.code === "commander.help" ? error.exitCode : 2;
    if (isUnforgetError(error)) {
      output.stderr.write(`unforget: ${error.message}\n`);
      return USAGE_ERRORS.has(error.code) ? 2 : 1;
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
