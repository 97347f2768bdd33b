import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import type { HookCommandRun } from "./run-hook-command.ts";

/** Why a command never ran, and what to do about it. */
export interface LaunchFailure {
  /** What happened ("the file /x/hook.sh does not exist"); recorded as the run's reason. */
  reason: string;
  /** What to change, for the report. */
  advice: string;
}

/** The exit codes POSIX shells use when they cannot run a command: found but not executable, not found. */
const NOT_EXECUTABLE = 126;
const NOT_FOUND = 127;

/**
 * The program a command line starts: its first word, unquoted, with `$VAR`, `${VAR}` and a leading `~`
 * expanded from `env`. Enough to find the script a settings file names ("$CLAUDE_PROJECT_DIR/.claude/x.sh");
 * not a shell.
 */
function programOf(command: string, env: Record<string, string | undefined>): string {
  const text = command.trimStart();
  let word = "";
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (quote === undefined && /\s/.test(char)) break;
    if ((char === '"' || char === "'") && (quote === undefined || quote === char)) {
      quote = quote === undefined ? char : undefined;
      continue;
    }
    const variable = char === "$" && quote !== "'" ? /^\$(?:\{(\w+)\}|(\w+))/.exec(text.slice(index)) : null;
    if (variable !== null) {
      word += env[variable[1] ?? variable[2] ?? ""] ?? "";
      index += variable[0].length - 1;
      continue;
    }
    word += char;
  }
  return word.startsWith("~/") && env.HOME !== undefined ? join(env.HOME, word.slice(2)) : word;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Why a command could not run at all: the shell could not start, or it reported the program missing (exit
 * 127) or not executable (exit 126). Undefined when the program ran and failed by itself (a script may exit
 * 127 because a command inside it is missing: its stderr then says which).
 */
export function launchFailure(
  command: string,
  run: HookCommandRun,
  launch: { cwd: string; env: Record<string, string | undefined> },
): LaunchFailure | undefined {
  if (run.spawnError !== undefined) {
    if (!exists(launch.cwd)) {
      return {
        reason: `its working directory ${launch.cwd} does not exist`,
        advice: "Pass an existing directory as cwd (or projectDir).",
      };
    }
    return {
      reason: `could not be started (${run.spawnError.message})`,
      advice: "Check that the system shell (/bin/sh) can be started.",
    };
  }
  if (run.exitCode !== NOT_FOUND && run.exitCode !== NOT_EXECUTABLE) return undefined;
  const program = programOf(command, launch.env);
  if (program === "") return undefined;
  if (program.includes("/")) {
    const path = resolve(launch.cwd, program);
    if (!exists(path)) {
      return {
        reason: `the file ${path} does not exist`,
        advice: "Fix the path in the settings file, or create the script.",
      };
    }
    if (run.exitCode === NOT_EXECUTABLE) {
      return {
        reason: `${path} is not executable`,
        advice: `Make it executable (chmod +x) or run it through its interpreter (sh ${path}).`,
      };
    }
    return undefined;
  }
  const onPath = (launch.env.PATH ?? "")
    .split(delimiter)
    .some((directory) => directory !== "" && isExecutableFile(join(directory, program)));
  if (run.exitCode === NOT_FOUND && !onPath) {
    return {
      reason: `no command named "${program}" was found on PATH`,
      advice: "Install it, or fix the command in the settings file.",
    };
  }
  return undefined;
}
