import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { checkMaxBytes } from "../session/read-session-bytes.ts";
import { ImportError } from "../shared/session-errors.ts";
import type { ClaudeCodeSessionSource, ClaudeCodeSubagentSource } from "./import-claude-code-session.ts";

const SUBAGENT_FILE = /^agent-(.+)\.jsonl$/;

export interface ReadClaudeCodeSessionDirOptions {
  /** The largest file read, in bytes (default 256 MiB); a larger main or subagent file is refused unread. */
  maxBytes?: number;
}

/**
 * Reads a Claude Code session from disk for `importClaudeCodeSession`. `path` is either the session file
 * (`<project>/<sessionId>.jsonl`) or the session's folder (`<project>/<sessionId>/`); the main file is
 * `<sessionId>.jsonl` beside the folder, the subagents are `<sessionId>/subagents/agent-<id>.jsonl` (sorted by
 * file name) with their optional `agent-<id>.meta.json`. A session without a folder has no subagents. Throws
 * `ImportError` when the main file does not exist.
 */
export async function readClaudeCodeSessionDir(
  path: string,
  options: ReadClaudeCodeSessionDirOptions = {},
): Promise<ClaudeCodeSessionSource> {
  const maxBytes = checkMaxBytes(options.maxBytes);
  const trimmed = path.replace(/[\\/]+$/, "");
  const sessionFolder = trimmed.endsWith(".jsonl") ? trimmed.slice(0, -".jsonl".length) : trimmed;
  const mainPath = join(dirname(sessionFolder), `${basename(sessionFolder)}.jsonl`);
  let main: string;
  try {
    main = await readBounded(mainPath, maxBytes);
  } catch (error) {
    throw new ImportError(
      `The Claude Code session file ${mainPath} could not be read (${error instanceof Error ? error.message : String(error)}); pass the session's .jsonl file or its folder beside it.`,
      { format: "claude-code", cause: error },
    );
  }
  const subagentFolder = join(sessionFolder, "subagents");
  let names: string[] = [];
  try {
    if ((await stat(subagentFolder)).isDirectory()) names = await readdir(subagentFolder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw unreadable(subagentFolder, error);
  }
  const subagents: ClaudeCodeSubagentSource[] = [];
  for (const name of names.sort()) {
    const match = SUBAGENT_FILE.exec(name);
    if (!match) continue;
    const agentId = match[1]!;
    const subagentPath = join(subagentFolder, name);
    let text: string;
    try {
      text = await readBounded(subagentPath, maxBytes);
    } catch (error) {
      throw unreadable(subagentPath, error);
    }
    const subagent: ClaudeCodeSubagentSource = { agentId, text };
    const meta = await readMeta(join(subagentFolder, `agent-${agentId}.meta.json`));
    if (meta !== undefined) subagent.meta = meta;
    subagents.push(subagent);
  }
  return { main, subagents };
}

function unreadable(path: string, error: unknown): ImportError {
  return new ImportError(
    `The Claude Code subagent path ${path} could not be read (${error instanceof Error ? error.message : String(error)}); fix its permissions or move it out of the session's subagents folder.`,
    { format: "claude-code", cause: error },
  );
}

async function readMeta(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    // An unreadable meta file only loses the agent's type and description; the conversation is still imported.
    return undefined;
  }
}

/** Reads a file as UTF-8 after checking its size, so a huge file is refused before it is loaded. */
async function readBounded(path: string, maxBytes: number): Promise<string> {
  const { size } = await stat(path);
  if (size > maxBytes) {
    throw new RangeError(`it is ${size} bytes, more than maxBytes (${maxBytes})`);
  }
  return readFile(path, "utf8");
}
