import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { unforgetHome } from "./settings/settings.ts";

/** One instructions file that goes into the system prompt. */
export interface InstructionsFile {
  path: string;
  /** Where it was found, for the prompt's heading: "project" or "user". */
  scope: "project" | "user";
  text: string;
}

/** Codex caps AGENTS.md at 32 KiB; a longer file is cut there, with a note saying so. */
export const MAX_INSTRUCTIONS_BYTES = 32_768;

/** The instruction files read, in order: the user's own, then the project's. */
export function instructionsPaths(projectDir: string, homeDir: string): InstructionsFile["path"][] {
  return [
    join(unforgetHome(homeDir), "AGENTS.md"),
    join(homeDir, ".claude", "CLAUDE.md"),
    join(projectDir, "AGENTS.md"),
    join(projectDir, "CLAUDE.md"),
    join(projectDir, ".claude", "CLAUDE.md"),
    join(projectDir, "CLAUDE.local.md"),
  ];
}

/** Reads the instruction files that exist (AGENTS.md, CLAUDE.md, …); empty ones are skipped. */
export async function readInstructions(projectDir: string, homeDir: string): Promise<InstructionsFile[]> {
  const files: InstructionsFile[] = [];
  const seen = new Set<string>();
  for (const [index, path] of instructionsPaths(projectDir, homeDir).entries()) {
    if (seen.has(path)) continue;
    seen.add(path);
    const buffer = await readFile(path).catch(() => undefined);
    if (buffer === undefined) continue;
    let text = buffer.subarray(0, MAX_INSTRUCTIONS_BYTES).toString("utf8").trim();
    if (text === "") continue;
    if (buffer.length > MAX_INSTRUCTIONS_BYTES)
      text += `\n[… cut at ${MAX_INSTRUCTIONS_BYTES} bytes of ${buffer.length}: read ${path} for the rest]`;
    files.push({ path, scope: index < 2 ? "user" : "project", text });
  }
  return files;
}

/** What the system prompt says about where the agent runs. */
export interface PromptEnvironment {
  cwd: string;
  platform: string;
  /** YYYY-MM-DD. */
  date: string;
  additionalDirectories: readonly string[];
}

/**
 * The agent's system prompt: how to work, where it runs, then the instruction files. It lives in the system
 * prompt, which no compaction touches, so the project's rules are in every request, before and after any
 * number of compactions (and it stays the cached prefix of every call).
 */
export function buildSystemPrompt(
  environment: PromptEnvironment,
  instructions: readonly InstructionsFile[],
): string {
  const parts = [
    [
      "You are Unforget, a coding agent working in the user's terminal. Work on the user's task with the tools you have: read before you edit, keep changes small and focused, run the project's tests when you change code, and say plainly what you did and what is left.",
      "Be brief: the user reads your replies in a terminal (Markdown is rendered). Do not repeat file contents the user can open.",
      "Tool calls may be denied by the user or by their rules: read the reason and adapt, do not retry the same call.",
      "Your context is managed for you: old tool results may be cleared and earlier parts summarised. Anything you need again can be read again from disk.",
    ].join("\n"),
    [
      "# Environment",
      `Working directory: ${environment.cwd}`,
      ...(environment.additionalDirectories.length > 0
        ? [`Also allowed: ${environment.additionalDirectories.join(", ")}`]
        : []),
      `Platform: ${environment.platform}`,
      `Today's date: ${environment.date}`,
    ].join("\n"),
    ...instructions.map(
      (file) =>
        `# Instructions from ${file.path} (${file.scope === "project" ? "the project's" : "the user's own"}; follow them)\n${file.text}`,
    ),
  ];
  return parts.join("\n\n");
}
