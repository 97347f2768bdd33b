import { PERMISSION_MODES, type PermissionMode } from "@unforget/session";
import { type Command, InvalidArgumentError, Option } from "commander";
import type { CommandOutput } from "../replay/replay-command.ts";
import { type AgentFlags, createAgentEnvironment } from "./agent-environment.ts";
import { AgentUsageError } from "./agent-errors.ts";
import { OUTPUT_FORMATS, type OutputFormat, runPrintMode } from "./print-mode.ts";

/** What the agent reads and writes besides the replay's outputs: the terminal, when there is one. */
export interface AgentIO extends CommandOutput {
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: CommandOutput["stdout"] & { isTTY?: boolean; columns?: number };
  /** Set by the command when it wants a particular exit code (0 otherwise). */
  exitCode?: number;
}

const AGENT_HELP = `
Without a prompt, starts the interactive agent (a REPL). With -p, runs the
prompt (or stdin) once and prints the answer. Piped stdin without -p is the
same as -p.

Examples:
  unforget                                   # the REPL
  unforget "why do the tests fail?"          # the REPL, with a first prompt
  unforget -p "summarise README.md" --output-format json
  git diff | unforget -p "review this" --max-turns 5
  unforget --continue                        # the newest session in this folder

A provider is configured by environment variables: ANTHROPIC_API_KEY, or
AWS_REGION and AWS credentials (Bedrock), or GOOGLE_CLOUD_PROJECT and Google
credentials (Vertex); UNFORGET_PROVIDER picks one, UNFORGET_MODEL the model.
With none, try \`unforget replay\`: the compaction ladder offline.

Exit codes: 0 done, 1 failed, 2 wrong command line, 3 stopped at --max-turns,
130 interrupted.`;

function list(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(/[,\s]+(?![^(]*\))/)
    .map((item) => item.trim())
    .filter((item) => item !== "");
  return [...(previous ?? []), ...items];
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new InvalidArgumentError("give a whole number of at least 1.");
  return number;
}

/** Adds the agent (`unforget [prompt]`, `-p`, the flags) to the program; `replay` and the others stay subcommands. */
export function addAgentCommand(program: Command, io: AgentIO): void {
  program
    .argument("[prompt]", "the first prompt (with -p: the only one)")
    .option("-p, --print", "run the prompt once without the UI and print the result")
    .addOption(
      new Option(
        "--output-format <format>",
        "with -p: text, json (one result object) or stream-json (one object per line)",
      )
        .choices(OUTPUT_FORMATS)
        .default("text"),
    )
    .option("--max-turns <n>", "most model calls for the prompt", positiveInteger)
    .option("--model <model>", "the model (default: settings, UNFORGET_MODEL, the provider's default)")
    .option(
      "--summarizer-model <model>",
      "the model that writes summaries and session notes, e.g. a cheaper one (default: settings, the model)",
    )
    .addOption(
      new Option(
        "--provider <name>",
        "the provider (default: settings, UNFORGET_PROVIDER, the environment)",
      ).choices(["anthropic", "bedrock", "vertex"]),
    )
    .option("-r, --resume <id>", "continue the session with this id (or a unique prefix of it)")
    .option("-c, --continue", "continue the newest session of this folder")
    .addOption(new Option("--permission-mode <mode>", "how tool calls are allowed").choices(PERMISSION_MODES))
    .option("--allowedTools <rules...>", 'rules allowed without asking, e.g. "Bash(npm test:*)" Read', list)
    .option("--disallowedTools <rules...>", "rules always denied", list)
    .option("--add-dir <dirs...>", "folders the tools may use besides this one")
    .option("--mcp-config <files...>", "MCP servers from these .mcp.json files (or JSON text)")
    .option(
      "--mcp-nonblocking",
      "send the first request without waiting for MCP servers to connect; each server's tools join once it has",
    )
    .option("--settings <file>", "one more settings file (or JSON text), above the others", collect)
    .option(
      "--trust-project",
      "load this folder's hooks, plugins, MCP servers and allow-rules without asking",
    )
    .option("--verbose", "show tool results in full, and compactions and tool calls on stderr with -p")
    .addHelpText("after", AGENT_HELP)
    .action(async (prompt: string | undefined, options: Record<string, unknown>) => {
      io.exitCode = await runAgent(prompt, options, io);
    });
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

async function runAgent(
  promptArgument: string | undefined,
  options: Record<string, unknown>,
  io: AgentIO,
): Promise<number> {
  const flags: AgentFlags = {
    ...(typeof options.model === "string" ? { model: options.model } : {}),
    ...(typeof options.provider === "string" ? { provider: options.provider } : {}),
    ...(typeof options.summarizerModel === "string" ? { summarizerModel: options.summarizerModel } : {}),
    ...(typeof options.resume === "string" ? { resume: options.resume } : {}),
    ...(options.continue === true ? { continue: true } : {}),
    ...(typeof options.permissionMode === "string"
      ? { permissionMode: options.permissionMode as PermissionMode }
      : {}),
    ...(Array.isArray(options.allowedTools) ? { allowedTools: options.allowedTools as string[] } : {}),
    ...(Array.isArray(options.disallowedTools)
      ? { disallowedTools: options.disallowedTools as string[] }
      : {}),
    ...(Array.isArray(options.addDir) ? { addDir: options.addDir as string[] } : {}),
    ...(Array.isArray(options.mcpConfig) ? { mcpConfig: options.mcpConfig as string[] } : {}),
    ...(Array.isArray(options.settings) ? { settings: options.settings as string[] } : {}),
    ...(options.verbose === true ? { verbose: true } : {}),
    ...(typeof options.maxTurns === "number" ? { maxTurns: options.maxTurns } : {}),
    ...(options.trustProject === true ? { trustProject: true } : {}),
    ...(options.mcpNonblocking === true ? { mcpNonblocking: true } : {}),
  };
  const stdin = io.stdin ?? process.stdin;
  const piped = stdin.isTTY !== true;
  if (options.print === true || piped) {
    const input = piped ? (await readStdin(stdin)).trim() : "";
    const prompt = [promptArgument?.trim(), input].filter((part) => part).join("\n\n");
    if (prompt === "")
      throw new AgentUsageError("prompt", "-p needs a prompt: give it as an argument, or pipe it on stdin.");
    return printOnce(prompt, flags, options.outputFormat as OutputFormat, io);
  }
  const { runRepl } = await import("../repl/run-repl.ts");
  return runRepl({ flags, ...(promptArgument ? { prompt: promptArgument } : {}), io });
}

async function printOnce(
  prompt: string,
  flags: AgentFlags,
  format: OutputFormat,
  io: AgentIO,
): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const environment = await createAgentEnvironment({
    flags,
    env: io.env,
    onNotice: (text) => io.stderr.write(`unforget: ${text}\n`),
  });
  try {
    for (const notice of environment.notices) io.stderr.write(`unforget: ${notice}\n`);
    if (flags.verbose)
      for (const plugin of environment.pluginFiles)
        io.stderr.write(`unforget: plugin ${plugin.name} loaded (${plugin.path})\n`);
    const session = await environment.openSession(
      environment.resumeId ? { resume: environment.resumeId } : {},
    );
    try {
      return await runPrintMode(environment, session, prompt, {
        format,
        verbose: flags.verbose === true,
        waitForMcp: flags.mcpNonblocking !== true,
        stdout: io.stdout,
        stderr: io.stderr,
        signal: controller.signal,
      });
    } finally {
      await session.close(controller.signal.aborted ? "interrupted" : "other");
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await environment.close();
  }
}
