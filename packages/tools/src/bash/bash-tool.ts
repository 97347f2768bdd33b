import { randomUUID } from "node:crypto";
import { mkdir, readFile, rm, stat, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Tool, ToolContext, ToolOutput } from "@unforget/core";
import { canonicalPath, isPathInside } from "@unforget/files";
import { groupExists, spawnShellCommand, terminateGroup } from "@unforget/process";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { formatSize } from "../format-size.ts";
import { displayPath, writableRoots } from "../paths/file-access.ts";
import { checkWholeNumberOption, ToolCallError, ToolsConfigurationError } from "../tool-errors.ts";
import { optionalBoolean, optionalInteger, optionalString, requiredString } from "../tool-input.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { readCommandOutput } from "./command-output.ts";
import { credentialVariables, withoutVariables } from "./shell-environment.ts";

/** A command the Bash tool starts in the background: a `local_bash` task spec of `@unforget/tasks`. */
export interface BashBackgroundCommand {
  type: "local_bash";
  command: string;
  description: string;
  cwd: string;
  env?: Record<string, string>;
  shell?: string;
}

/**
 * What runs the Bash tool's `run_in_background` commands, given by the application: a `TaskManager` of
 * `@unforget/tasks` is one. The tool tells the model to follow the task with the task tools (`task_output`,
 * `task_stop`).
 */
export interface BashBackgroundTasks {
  /** Called once per background command: starts it and resolves with its task id, or rejects when it cannot. */
  start(spec: BashBackgroundCommand): Promise<string>;
}

export interface BashToolOptions {
  /** Starts `run_in_background` commands as `local_bash` tasks; without it, the tool has no such parameter. */
  tasks?: BashBackgroundTasks;
  /** Credential variables (see `CREDENTIAL_VARIABLES`) that commands may still get, by name. */
  allowEnv?: readonly string[];
  /** Added to every command's environment, as given (a credential variable named here is passed too). */
  env?: Record<string, string>;
  /** Folders besides the session's cwd that the shell's working directory may move into with `cd`. */
  additionalDirectories?: readonly string[];
  /** Where output files are written while commands run (default: a new folder in the system's temp folder). */
  outputDir?: string;
  /** Timeout of a command that gives none (default 120 000 ms). */
  defaultTimeoutMs?: number;
  /** Largest timeout a command may ask for (default 600 000 ms). */
  maxTimeoutMs?: number;
  /** Characters of output returned (default 30 000); longer output is cut in the middle and kept in its file. */
  maxOutputChars?: number;
  /** A command whose output passes this many bytes is stopped (default 64 MiB): the disk is not a sink. */
  maxOutputFileBytes?: number;
  /** Between SIGTERM and SIGKILL when a command's process group is stopped (default 1 000 ms). */
  killGraceMs?: number;
  /** The shell that runs commands with `-c` (default /bin/bash, or /bin/sh where bash is missing). */
  shell?: string;
}

const DEFAULTS = {
  // Claude Code's Bash: 2 minutes by default, 10 at most, 30 000 characters of output.
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  maxOutputChars: 30_000,
  maxOutputFileBytes: 64 * 1024 * 1024,
  killGraceMs: 1_000,
  // How often a running command's output file is measured against maxOutputFileBytes (a command that floods
  // it writes on until the next check; the file is then cut back to the limit).
  outputCheckMs: 100,
  // The session's own timeout for a call sits this far past the longest command timeout, so ours fires first.
  sessionTimeoutMarginMs: 30_000,
};

/** The task tools of `@unforget/tasks` (its `TASK_TOOL_NAMES`) that follow a background command. */
const TASK_TOOLS = { output: "task_output", stop: "task_stop" } as const;

/** The shell's working directory, per session. */
interface ShellState {
  cwd: string;
}

const SHELL_STATE = Symbol("@unforget/tools/shell");

function shellStateOf(context: ToolContext): ShellState {
  let state = context.sessionState.get(SHELL_STATE) as ShellState | undefined;
  if (state === undefined) {
    state = { cwd: context.cwd };
    context.sessionState.set(SHELL_STATE, state);
  }
  return state;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function description(options: { background: boolean; maxOutputChars: number }): string {
  return [
    "Runs a bash command and returns what it printed (stdout and stderr together).",
    "- The working directory persists between calls, so cd works; other shell state (variables, functions, aliases) does not: each call starts a new shell. cd stays within the session's folders.",
    "- timeout is in milliseconds: 120000 (2 minutes) by default, 600000 (10 minutes) at most. At the timeout the command and every process it started are stopped.",
    `- Output over ${options.maxOutputChars} characters is cut in the middle; the whole output is kept in a file you can Read.`,
    "- stdin is empty: interactive commands get no input. Provider credentials are not in the environment.",
    "- Prefer Read, Edit, Write, Glob and Grep to cat, sed, echo >, find and grep.",
    ...(options.background
      ? [
          `- run_in_background starts the command as a background task and returns its id at once (for servers, watchers, long builds); you are told when it ends, and ${TASK_TOOLS.output} reads its output.`,
        ]
      : []),
  ].join("\n");
}

/** Why a command was stopped before it ended by itself. */
type StopReason = "timeout" | "aborted" | "output";

/** The Bash tool's options with every default filled in, the state each call of one tool reads. */
interface BashSettings {
  options: BashToolOptions;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  maxOutputChars: number;
  maxOutputFileBytes: number;
  killGraceMs: number;
  outputDir: string;
}

/** Checks the options and fills in the defaults; a configuration the tool cannot run with throws. */
function resolveBashSettings(options: BashToolOptions): BashSettings {
  for (const key of ["defaultTimeoutMs", "maxTimeoutMs", "maxOutputChars", "maxOutputFileBytes"] as const) {
    checkWholeNumberOption(options[key], key);
  }
  checkWholeNumberOption(options.killGraceMs, "killGraceMs", 0);
  const settings: BashSettings = {
    options,
    defaultTimeoutMs: options.defaultTimeoutMs ?? DEFAULTS.defaultTimeoutMs,
    maxTimeoutMs: options.maxTimeoutMs ?? DEFAULTS.maxTimeoutMs,
    maxOutputChars: options.maxOutputChars ?? DEFAULTS.maxOutputChars,
    maxOutputFileBytes: options.maxOutputFileBytes ?? DEFAULTS.maxOutputFileBytes,
    killGraceMs: options.killGraceMs ?? DEFAULTS.killGraceMs,
    outputDir: resolve(options.outputDir ?? join(tmpdir(), `unforget-bash-${randomUUID()}`)),
  };
  if (settings.defaultTimeoutMs > settings.maxTimeoutMs) {
    throw new ToolsConfigurationError(
      `defaultTimeoutMs (${settings.defaultTimeoutMs}) is over maxTimeoutMs (${settings.maxTimeoutMs}); raise maxTimeoutMs or lower defaultTimeoutMs.`,
      { option: "defaultTimeoutMs" },
    );
  }
  return settings;
}

/** The credential variables of this process that commands do not get (a variable `env` sets is theirs). */
function scrubbedVariables(options: BashToolOptions): string[] {
  return credentialVariables(process.env, [...(options.allowEnv ?? []), ...Object.keys(options.env ?? {})]);
}

/** The working directory for the next command: the shell's, unless it was removed in the meantime. */
async function workingDirectory(context: ToolContext, notes: string[]): Promise<ShellState> {
  const state = shellStateOf(context);
  const exists = await stat(state.cwd).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  if (!exists && state.cwd !== context.cwd) {
    notes.push(
      `The shell's working directory ${state.cwd} no longer exists; this command ran in ${context.cwd}.`,
    );
    state.cwd = context.cwd;
  }
  return state;
}

/** Moves the shell to where the command left it, unless that is outside the session's folders. */
async function followCd(
  options: BashToolOptions,
  context: ToolContext,
  state: ShellState,
  cwdFile: string,
  notes: string[],
): Promise<void> {
  const reported = (await readFile(cwdFile, "utf8").catch(() => "")).trim();
  await rm(cwdFile, { force: true });
  if (reported === "" || reported === state.cwd) return;
  for (const root of writableRoots(context, options)) {
    if (isPathInside(await canonicalPath(root).catch(() => root), reported)) {
      state.cwd = reported;
      return;
    }
  }
  state.cwd = context.cwd;
  notes.push(
    `The command moved to ${reported}, outside the session's folders; the shell's working directory was reset to ${context.cwd}.`,
  );
}

/** Starts the command as a background task of the application's task runner and says how to follow it. */
async function runInBackground(
  options: BashToolOptions,
  command: string,
  summary: string | undefined,
  context: ToolContext,
): Promise<string> {
  if (options.tasks === undefined) {
    throw new ToolCallError(
      "Bash: run_in_background is not available in this session; run the command without it.",
    );
  }
  const notes: string[] = [];
  const state = await workingDirectory(context, notes);
  // The task inherits the manager's environment: the script itself removes the credentials first.
  const unset = scrubbedVariables(options);
  const id = await options.tasks.start({
    type: "local_bash",
    command: unset.length === 0 ? command : `unset ${unset.join(" ")}\n${command}`,
    description: summary ?? command,
    cwd: state.cwd,
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.shell === undefined ? {} : { shell: options.shell }),
  });
  return [
    ...notes,
    `Started in the background as task ${id}. You will be told when it ends; read its output with ${TASK_TOOLS.output} (id ${id}) and stop it with ${TASK_TOOLS.stop}.`,
  ].join("\n");
}

/** A command started in its own process group, its output going to `outputPath`. */
type StartedCommand = ReturnType<typeof spawnShellCommand>;

/** How a foreground command ended: its exit, and why it was stopped if it did not end by itself. */
interface CommandEnd {
  ended: Awaited<StartedCommand["exited"]>;
  stopped: StopReason | undefined;
}

/**
 * Waits for the command to end, stopping its process group at the timeout, on the call's abort, or when its output
 * file passes `maxOutputFileBytes` (then cut back to the limit).
 */
async function superviseCommand(
  settings: BashSettings,
  started: StartedCommand,
  outputPath: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<CommandEnd> {
  const { identity, exited } = started;
  let stopped: StopReason | undefined;
  let stopping: Promise<unknown> = Promise.resolve();
  const stop = (reason: StopReason) => {
    if (stopped !== undefined) return;
    stopped = reason;
    if (identity !== undefined) stopping = terminateGroup(identity.pid, settings.killGraceMs);
  };
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
  const onAbort = () => stop("aborted");
  signal.addEventListener("abort", onAbort, { once: true });
  if (signal.aborted) stop("aborted");
  const watch = setInterval(() => {
    stat(outputPath).then(
      (stats) => {
        if (stats.size > settings.maxOutputFileBytes) stop("output");
      },
      () => undefined,
    );
  }, DEFAULTS.outputCheckMs);
  let ended: CommandEnd["ended"];
  try {
    ended = await exited;
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
    signal.removeEventListener("abort", onAbort);
  }
  await stopping;
  if (stopped === "output") await truncate(outputPath, settings.maxOutputFileBytes).catch(() => undefined);
  return { ended, stopped };
}

/** The tool's answer for a command that ended: what it printed, with why it stopped or how it failed. */
function commandResult(
  settings: BashSettings,
  { ended, stopped }: CommandEnd,
  printed: string,
  timeoutMs: number,
  notes: readonly string[],
): ToolOutput {
  const parts: string[] = [];
  let isError = true;
  if (stopped === "timeout") {
    parts.push(
      `The command timed out after ${timeoutMs} ms and was stopped, with every process it started. Give it a longer timeout (at most ${settings.maxTimeoutMs} ms), or start it with run_in_background. Its output until then:`,
      printed,
    );
  } else if (stopped === "aborted") {
    parts.push(
      "The command was interrupted and stopped, with every process it started. Its output until then:",
      printed,
    );
  } else if (stopped === "output") {
    parts.push(
      `The command was stopped: its output passed ${formatSize(settings.maxOutputFileBytes)}. Send large output to a file and read parts of it, or filter it (grep, head, tail).`,
      printed,
    );
  } else if (ended.signal !== null) {
    parts.push(printed, `Killed by ${ended.signal}.`);
  } else if (ended.code !== 0) {
    parts.push(printed, `Exit code ${ended.code}.`);
  } else {
    parts.push(printed);
    isError = false;
  }
  return { content: [...parts, ...notes].join("\n\n"), isError };
}

/** Runs the command in the shell's working directory and waits for it, its output kept in a file. */
async function runInForeground(
  settings: BashSettings,
  command: string,
  timeoutMs: number,
  context: ToolContext,
): Promise<ToolOutput> {
  const { options } = settings;
  const notes: string[] = [];
  const state = await workingDirectory(context, notes);
  await mkdir(settings.outputDir, { recursive: true, mode: 0o700 });
  const base = join(
    settings.outputDir,
    `${context.toolUseId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80)}-${randomUUID().slice(0, 8)}`,
  );
  const outputPath = `${base}.out`;
  const cwdFile = `${base}.cwd`;
  // The EXIT trap records where the command left the shell, whichever way the script ends.
  const script = `trap 'pwd -P >| ${shellQuote(cwdFile)}' EXIT\n${command}`;
  const started = spawnShellCommand(script, {
    cwd: state.cwd,
    baseEnv: withoutVariables(process.env, scrubbedVariables(options)),
    ...(options.env === undefined ? {} : { env: options.env }),
    outputPath,
    ...(options.shell === undefined ? {} : { shell: options.shell }),
  });
  started.child.stdin?.end();
  const end = await superviseCommand(settings, started, outputPath, timeoutMs, context.signal);
  const { identity } = started;
  // What the command left running in its group would outlive the call and write into a file nobody reads.
  if (identity !== undefined && groupExists(identity.pid)) {
    await terminateGroup(identity.pid, settings.killGraceMs);
    if (end.stopped === undefined) {
      notes.push(
        "Processes the command left running in the background were stopped when it ended; start long-running commands with run_in_background.",
      );
    }
  }
  if (end.ended.error !== undefined) {
    await rm(outputPath, { force: true });
    throw new ToolCallError(`Bash could not start the shell: ${end.ended.error.message}.`);
  }
  await followCd(options, context, state, cwdFile, notes);
  const output = await readCommandOutput(
    outputPath,
    settings.maxOutputChars,
    displayPath(outputPath, context.cwd),
  );
  const printed = output.text === "" ? "(no output)" : output.text;
  return commandResult(settings, end, printed, timeoutMs, notes);
}

/** The Bash tool's input schema; `run_in_background` only where a task runner was given. */
function bashInputSchema(settings: BashSettings, background: boolean): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      command: { type: "string", description: "The command to run." },
      timeout: {
        type: "integer",
        minimum: 1,
        maximum: settings.maxTimeoutMs,
        description: `Timeout in milliseconds (default ${settings.defaultTimeoutMs}, at most ${settings.maxTimeoutMs}).`,
      },
      description: {
        type: "string",
        description: "What the command does, in 5–10 words (e.g. 'Run the unit tests').",
      },
      ...(background
        ? {
            run_in_background: {
              type: "boolean",
              description: "Start the command as a background task and return its id at once.",
            },
          }
        : {}),
    },
    required: ["command"],
    additionalProperties: false,
  };
}

/** One call of the Bash tool: checks the input, then runs the command in the background or the foreground. */
async function runBashCall(
  settings: BashSettings,
  input: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutput | string> {
  const name = BUILTIN_TOOL_NAMES.bash;
  const command = requiredString(name, input, "command");
  if (command.trim() === "") throw new ToolCallError("Bash: the command is empty.");
  // The operating system takes no NUL byte in an argument (spawn would throw); bash could not read one either.
  if (command.includes("\u0000")) {
    throw new ToolCallError(
      "Bash: the command contains a NUL byte (\\0), which a shell command cannot hold. Remove it; to write one, use printf '\\0'.",
    );
  }
  const timeoutMs =
    optionalInteger(name, input, "timeout", { min: 1, max: settings.maxTimeoutMs }) ??
    settings.defaultTimeoutMs;
  const summary = optionalString(name, input, "description");
  if (optionalBoolean(name, input, "run_in_background") === true) {
    return runInBackground(settings.options, command, summary, context);
  }
  return runInForeground(settings, command, timeoutMs, context);
}

/** Creates the Bash tool: one process group per command, a persistent working directory, credentials scrubbed. */
export function createBashTool(options: BashToolOptions = {}): Tool {
  const settings = resolveBashSettings(options);
  const background = options.tasks !== undefined;
  return defineBuiltinTool({
    name: BUILTIN_TOOL_NAMES.bash,
    description: description({ background, maxOutputChars: settings.maxOutputChars }),
    inputSchema: bashInputSchema(settings, background),
    readOnly: false,
    // A command's output may not come back the same (or at all) when it runs again: saved before it is cleared.
    resultRetention: "persist",
    concurrencySafe: false,
    timeoutMs: settings.maxTimeoutMs + DEFAULTS.sessionTimeoutMarginMs,
    permissionSubject: (input) =>
      typeof input.command === "string" ? { kind: "command", command: input.command } : undefined,
    run: (input, context) => runBashCall(settings, input, context),
  });
}
