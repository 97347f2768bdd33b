import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { type ContentBlock, createMessage, type Message } from "@unforget/core";
import { createTranscriptEntry } from "@unforget/transcript";
import { type DemoStep, demoScript } from "./demo-script.ts";

/** When the demo session starts (fixed, so the session is the same on every machine). */
export const DEMO_START = Date.parse("2026-01-15T09:00:00.000Z");
export const DEMO_MODEL = "claude-sonnet-4-6";
/** Claude Code's Read tool shows at most this many lines. */
const READ_MAX_LINES = 2_000;
/** Command outputs longer than this are cut, as an agent's shell tool does. */
const COMMAND_MAX_CHARS = 30_000;

/**
 * Generates the demo session by running its script over the repository at `root`: files are read and
 * commands run for real, in the C locale, so the session depends only on the repository's content.
 * Returns the session as Unforget transcript lines (JSONL).
 */
export function generateDemoSession(root: string): string {
  const sources = {
    sources: (name: string) => listSources(root, name, (file) => !file.endsWith(".test.ts")),
    tests: (name: string) => listSources(root, name, (file) => file.endsWith(".test.ts")),
    content: (path: string) => (existsSync(join(root, path)) ? readFileSync(join(root, path), "utf8") : ""),
  };
  const messages: Message[] = [];
  let clock = DEMO_START;
  let step = 0;
  const next = (seconds: number) => {
    clock += seconds * 1_000;
    return new Date(clock).toISOString();
  };
  const id = (prefix: string) => `${prefix}_${String(messages.length + 1).padStart(5, "0")}`;
  for (const phase of demoScript(sources)) {
    next((phase.idleMinutes ?? 1) * 60);
    messages.push(
      createMessage("user", phase.user, { id: id("demo_user"), timestamp: new Date(clock).toISOString() }),
    );
    for (const action of phase.steps) {
      step++;
      const toolUseId = `toolu_demo_${String(step).padStart(4, "0")}`;
      const content: ContentBlock[] = [
        { type: "text", text: action.say },
        { type: "tool_use", id: toolUseId, name: action.tool, input: action.input },
      ];
      messages.push(
        createMessage("assistant", content, {
          id: id("demo_assistant"),
          timestamp: next(4 + ((step * 7) % 23)),
          responseId: `resp_demo_${String(step).padStart(4, "0")}`,
          model: DEMO_MODEL,
          stopReason: "tool_use",
        }),
      );
      const result = runTool(root, action);
      messages.push(
        createMessage(
          "user",
          [
            {
              type: "tool_result",
              tool_use_id: toolUseId,
              content: result.output,
              ...(result.error ? { is_error: true } : {}),
            },
          ],
          { id: id("demo_result"), timestamp: next(1 + (step % 5)) },
        ),
      );
    }
    messages.push(
      createMessage("assistant", phase.reply, {
        id: id("demo_assistant"),
        timestamp: next(9),
        responseId: `resp_demo_reply_${String(messages.length).padStart(5, "0")}`,
        model: DEMO_MODEL,
        stopReason: "end_turn",
      }),
    );
  }
  return messages
    .map((message) =>
      JSON.stringify(
        createTranscriptEntry({ type: "message", message, timestamp: message.timestamp, sessionId: "demo" }),
      ),
    )
    .join("\n")
    .concat("\n");
}

function listSources(root: string, name: string, keep: (file: string) => boolean): string[] {
  const folder = join(root, "packages", name, "src");
  if (!existsSync(folder)) return [];
  // Every folder below src (a package groups its files in concept folders), in a fixed order.
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((file) => file.split(sep).join("/"))
    .filter((file) => file.endsWith(".ts") && !file.includes("__fixtures__/") && keep(file))
    .sort()
    .map((file) => `packages/${name}/src/${file}`);
}

/** Runs one tool for real and returns what the agent's tool would have answered. */
function runTool(root: string, step: DemoStep): { output: string; error?: boolean } {
  switch (step.tool) {
    case "Read":
      return readLikeAnAgent(root, String(step.input.file_path));
    case "Bash":
      return runCommand(root, String(step.input.command));
    case "Grep":
      return runCommand(
        root,
        `grep -rn --include='*.ts' -e ${shellQuote(String(step.input.pattern))} ${shellQuote(String(step.input.path))} | sort`,
      );
    case "Edit":
      return { output: `The file ${String(step.input.file_path)} has been updated.` };
    case "Write":
      return { output: `File created successfully at: ${String(step.input.file_path)}` };
    case "TodoWrite":
      return {
        output:
          "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
      };
  }
}

/** A file as an agent's Read tool shows it: numbered lines (`cat -n` style), at most 2,000 of them. */
function readLikeAnAgent(root: string, path: string): { output: string; error?: boolean } {
  const file = join(root, path);
  if (!existsSync(file)) return { output: `File does not exist: ${path}`, error: true };
  const lines = readFileSync(file, "utf8").replace(/\n$/, "").split("\n");
  const shown = lines
    .slice(0, READ_MAX_LINES)
    .map((line, index) => `${String(index + 1).padStart(6, " ")}\t${line}`)
    .join("\n");
  return {
    output:
      lines.length > READ_MAX_LINES
        ? `${shown}\n… (${lines.length - READ_MAX_LINES} more lines not shown)`
        : shown,
  };
}

function runCommand(root: string, command: string): { output: string; error?: boolean } {
  const run = spawnSync("sh", ["-c", command], {
    cwd: root,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
    maxBuffer: 16 * 1024 * 1024,
  });
  const text = `${run.stdout ?? ""}${run.stderr ?? ""}`.replace(/\n$/, "");
  const output =
    text.length > COMMAND_MAX_CHARS
      ? `${text.slice(0, COMMAND_MAX_CHARS)}\n… (output cut at ${COMMAND_MAX_CHARS} characters)`
      : text;
  return run.status === 0
    ? { output: output || "(no output)" }
    : { output: output || `exit code ${run.status}`, error: true };
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
