import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { type AgentIO, addAgentCommand } from "./agent/agent-command.ts";
import { appPath } from "./app-path.ts";
import { registerDbCommand } from "./db-command.ts";
import { registerHistoryCommand } from "./history-command.ts";
import { registerMemoryCommand } from "./memory-command.ts";
import { MIN_WINDOW } from "./parse-window.ts";

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(appPath("package.json"), "utf8")) as {
    version?: string;
  };
  return manifest.version ?? "0.0.0";
}

const REPLAY_HELP = `
SESSION is a Claude Code session (.jsonl, or its session folder), a SWE-agent
or mini-swe-agent trajectory, an OpenHands event stream or evaluation output
(FILE#LINE picks one run), or an Unforget transcript, recognised by content.
Without SESSION: your newest Claude Code session under ~/.claude/projects,
else the demo session that ships with unforget (--demo: the demo, always).
Subagent messages never enter the main context.

Exit codes: 0 done; 1 an error it explains; 2 a command line it cannot use;
3 some requests were over the window; 4 an invariant broke (a bug: report it).

Examples:
  unforget replay
  unforget replay --demo --window 16K --report report.html
  unforget replay ~/.claude/projects/my-app/3f1c….jsonl --report report.html
  unforget replay run.traj --window 16K --json > stats.json
  unforget replay session.jsonl --window 32K --dump-requests requests/

Nothing leaves this machine unless --summarizer model is given: then the
provider configured by UNFORGET_PROVIDER (or ANTHROPIC_API_KEY, AWS_*,
GOOGLE_*) writes the summaries.`;

/**
 * Commander's message about a command line, as the app's other errors read: `unforget: ` and a sentence, the
 * option and its value first (`--max-turns x: give a whole number of at least 1.`), not `error: option
 * '--max-turns <n>' argument 'x' is invalid. give a whole number…`.
 */
function commandLineError(text: string): string {
  const message = text.replace(/^error: /, "");
  const invalid = /^option '([^']+)' argument '([^']*)' is invalid\. (.*)$/s.exec(message);
  if (invalid) {
    const [, flags = "", value, reason = ""] = invalid;
    const option = flags.split(/[\s,|]+/).find((flag) => flag.startsWith("--")) ?? flags.split(/\s/)[0];
    const choices = /^Allowed choices are (.*)\.\s*$/s.exec(reason);
    return `unforget: ${option} ${value}: ${choices ? `use one of ${choices[1]}.` : reason.trimEnd()}\n`;
  }
  return `unforget: ${message.charAt(0).toUpperCase()}${message.slice(1)}`;
}

/**
 * The `unforget` command line. `output` is where commands write; parse with `parseAsync`. A command that
 * wants an exit code other than 0 sets `output.exitCode` (replay: 3 for overflows, 4 for broken invariants).
 */
export function createProgram(output: AgentIO): Command {
  const program = new Command("unforget")
    .description("Unforget: keep an LLM agent working for hours without forgetting.")
    .version(packageVersion(), "-v, --version")
    .showHelpAfterError("(add --help for usage)")
    .configureOutput({
      writeOut: (text) => output.stdout.write(text),
      writeErr: (text) => output.stderr.write(text),
      outputError: (text, write) => write(commandLineError(text)),
    })
    .exitOverride();
  addAgentCommand(program, output);
  program
    .command("replay")
    .summary("replay a recorded session through the compaction ladder (offline)")
    .description(
      "Replays a recorded agent session call by call through the ContextManager, as if it were live, at the window you choose: the recorded timestamps are its clock, and the same input always gives the same output. Prints a table (or JSON) of what the ladder did; optionally writes an HTML report and every request.",
    )
    .argument("[session]", "session file or folder (default: newest Claude Code session, else the demo)")
    .option("--demo", "replay the demo session that ships with unforget, whatever else is on this machine")
    .option(
      "-w, --window <tokens>",
      `context window in tokens: 16000, 16K, 1M (at least ${MIN_WINDOW / 1000}K)`,
      "200K",
    )
    .addOption(
      new Option("-s, --summarizer <kind>", "who writes summaries: offline (extractive, no model) or model")
        .choices(["offline", "model"])
        .default("offline"),
    )
    .option(
      "--summarizer-model <model>",
      "the model that writes the summaries (with --summarizer model) and whose prices they are billed at (default: the session's)",
    )
    .addOption(
      new Option(
        "--cache-ttl <lifetime>",
        "how long the prompt cache lives: 5m (as the API) or 1h (writes cost 2×)",
      )
        .choices(["5m", "1h"])
        .default("5m"),
    )
    .option("--json", "print only the statistics as JSON on stdout (progress stays on stderr)")
    .option("-r, --report <file.html>", "write a self-contained HTML report with the chart")
    .option(
      "-d, --dump-requests <dir>",
      "write each request's Messages API body to DIR/000001.json, … (DIR new or empty)",
    )
    .addHelpText("after", REPLAY_HELP)
    .action(async (session: string | undefined, options: Record<string, unknown>) => {
      // Loaded only for replay: the agent's start-up does not pay for it.
      const { runReplayCommand } = await import("./replay/replay-command.ts");
      output.exitCode = await runReplayCommand(
        session,
        {
          demo: options.demo === true,
          window: options.window as string,
          summarizer: options.summarizer as string,
          ...(typeof options.summarizerModel === "string"
            ? { summarizerModel: options.summarizerModel }
            : {}),
          cacheTtl: options.cacheTtl as string,
          json: options.json === true,
          ...(typeof options.report === "string" ? { report: options.report } : {}),
          ...(typeof options.dumpRequests === "string" ? { dumpRequests: options.dumpRequests } : {}),
        },
        output,
      );
    });
  registerMemoryCommand(program, output);
  registerHistoryCommand(program, output);
  registerDbCommand(program, output);
  return program;
}
