import { open, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import {
  type ImportResult,
  importClaudeCodeTranscript,
  importMiniSweAgentTrajectory,
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
  importSweAgentTrajectory,
  importUnforgetTranscript,
  type Message,
} from "@unforget/core";
import { SessionInputError } from "./replay-errors.ts";

/** The largest session file read (a larger one is refused before reading). */
export const MAX_SESSION_BYTES = 256 * 1024 * 1024;

/** A recorded session, ready to replay: the main conversation only (subagents never enter it). */
export interface LoadedSession {
  /** The file that was read. */
  path: string;
  /** The format it was recognised as. */
  format: string;
  /** Every message of the main conversation in order, across the session's own compactions (their summaries left out). */
  messages: Message[];
  /** The recorded system prompt, when the format keeps one. */
  system?: string;
  /** The model the session used (its last assistant message's), when recorded. */
  model?: string;
  /** Defects the importer found and worked around (unreadable lines, a cut-off last line, …). */
  problems: string[];
  /** Subagent (sidechain) lines left out of the main conversation. */
  sidechainSkipped: number;
  /** For a file of several runs: which one this is (1-based line) and how many there are. */
  instance?: { line: number; count: number };
}

/**
 * Reads a session file (or a Claude Code session folder) and imports it with the importer its content fits.
 * `file.jsonl#N` picks the run on line N of a multi-run file. The file is opened read-only. Throws
 * `SessionInputError` for a path that is missing, not a file, empty, binary, too large or in no known format.
 */
export async function loadSession(path: string): Promise<LoadedSession> {
  const { file, line } = await splitInstance(path);
  const text = await readSessionText(file);
  const { format, result, instances } = importByContent(text, file);
  let chosen = result;
  let instance: LoadedSession["instance"];
  if (instances.length > 0) {
    const wanted = line === undefined ? instances[0] : instances.find((item) => item.line === line);
    if (!wanted) {
      throw new SessionInputError(
        `${file} has no run on line ${line}; its runs are on lines ${instances.map((item) => item.line).join(", ")}.`,
        { path, kind: "not_found" },
      );
    }
    chosen = wanted.result;
    instance = { line: wanted.line, count: instances.length };
  }
  const messages = mainConversation(chosen);
  const model = [...messages]
    .reverse()
    .find((message) => message.role === "assistant" && message.model)?.model;
  return {
    path: file,
    format,
    messages,
    ...(chosen.system !== undefined ? { system: chosen.system } : {}),
    ...(model !== undefined ? { model } : {}),
    problems: chosen.report.problems.map((problem) => problem.description),
    sidechainSkipped: chosen.report.counts.sidechainSkipped,
    ...(instance ? { instance } : {}),
  };
}

/** All segments' messages: a session that compacted itself is replayed from its start, without its own summaries. */
function mainConversation(result: ImportResult): Message[] {
  const messages: Message[] = [];
  for (const entry of result.entries) {
    if (entry.type === "message" && !entry.message.isCompactSummary) messages.push(entry.message);
  }
  return messages.length > 0 ? messages : result.messages;
}

async function splitInstance(path: string): Promise<{ file: string; line?: number }> {
  const match = /^(.*)#(\d+)$/.exec(path);
  if (!match || (await exists(path))) return { file: path };
  return { file: match[1]!, line: Number(match[2]) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Reads the file as UTF-8 after checking what it is; a Claude Code session folder reads its main file. */
async function readSessionText(path: string): Promise<string> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    throw new SessionInputError(`${path} does not exist. Pass the path of a session file (see --help).`, {
      path,
      kind: "not_found",
      cause: error,
    });
  }
  if (info.isDirectory()) {
    const main = join(dirname(path), `${basename(path.replace(/[\\/]+$/, ""))}.jsonl`);
    if (await exists(main)) return readSessionText(main);
    throw new SessionInputError(
      `${path} is a folder, and no ${basename(main)} lies beside it as it does for a Claude Code session folder. Pass a session file.`,
      { path, kind: "not_a_file" },
    );
  }
  if (!info.isFile()) {
    throw new SessionInputError(`${path} is not a regular file. Pass a session file.`, {
      path,
      kind: "not_a_file",
    });
  }
  if (info.size === 0) {
    throw new SessionInputError(`${path} is empty: there is no conversation to replay.`, {
      path,
      kind: "empty",
    });
  }
  if (info.size > MAX_SESSION_BYTES) {
    throw new SessionInputError(
      `${path} is ${formatBytes(info.size)}, more than the ${formatBytes(MAX_SESSION_BYTES)} a session file may have; it was not read. Replay a smaller session (or one of its runs).`,
      { path, kind: "too_large" },
    );
  }
  let bytes: Buffer;
  try {
    const handle = await open(path, "r");
    try {
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new SessionInputError(
      `${path} could not be read (${error instanceof Error ? error.message : String(error)}). Check its permissions.`,
      { path, kind: "unreadable", cause: error },
    );
  }
  if (bytes.includes(0)) {
    throw new SessionInputError(
      `${path} is a binary file (it contains NUL bytes), not a session transcript. Pass a session's .jsonl or .json file.`,
      { path, kind: "binary" },
    );
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw new SessionInputError(
      `${path} is not UTF-8 text, so it is not a session transcript. Pass a session's .jsonl or .json file.`,
      { path, kind: "binary", cause: error },
    );
  }
  if (text.trim().length === 0) {
    throw new SessionInputError(`${path} holds only white space: there is no conversation to replay.`, {
      path,
      kind: "empty",
    });
  }
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}

interface Imported {
  format: string;
  result: ImportResult;
  instances: { line: number; result: ImportResult }[];
}

/**
 * Runs each importer over the content and keeps the one that reads the most messages (an importer given
 * another format reads none or fails). The importers own every format's parsing.
 */
function importByContent(text: string, path: string): Imported {
  let json: unknown;
  let jsonError: string | undefined;
  try {
    json = JSON.parse(text);
  } catch (error) {
    jsonError = error instanceof Error ? error.message : String(error);
  }
  const candidates: { format: string; run: () => Imported }[] = [
    { format: "claude-code", run: () => single("claude-code", importClaudeCodeTranscript(text)) },
    { format: "unforget", run: () => single("unforget", importUnforgetTranscript(text)) },
    {
      format: "openhands-evaluation",
      run: () => {
        const instances = importOpenHandsEvaluationOutput(text).map((item) => ({
          line: item.line,
          result: item.result,
        }));
        return { format: "openhands-evaluation", result: instances[0]!.result, instances };
      },
    },
    { format: "swe-agent", run: () => single("swe-agent", importSweAgentTrajectory(needJson())) },
    {
      format: "mini-swe-agent",
      run: () => single("mini-swe-agent", importMiniSweAgentTrajectory(needJson())),
    },
    { format: "openhands", run: () => single("openhands", importOpenHandsTrajectory(needJson())) },
  ];
  function needJson(): unknown {
    if (jsonError !== undefined) throw new Error(`not one JSON document (${jsonError})`);
    return json;
  }
  let best: Imported | undefined;
  let bestCount = 0;
  const tried: string[] = [];
  for (const candidate of candidates) {
    try {
      const imported = candidate.run();
      const count = mainConversation(imported.result).length;
      if (count > bestCount) {
        best = imported;
        bestCount = count;
      }
      if (count === 0) tried.push(`${candidate.format}: no conversation found`);
    } catch (error) {
      tried.push(
        `${candidate.format}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      );
    }
  }
  if (!best) {
    throw new SessionInputError(
      `${path} is not a session in any format Unforget reads. Tried:\n${tried.map((line) => `- ${line}`).join("\n")}\nPass a Claude Code session (.jsonl or its folder), a SWE-agent or mini-swe-agent trajectory, an OpenHands event stream or evaluation output, or an Unforget transcript.`,
      { path, kind: "unrecognized" },
    );
  }
  return best;
}

function single(format: string, result: ImportResult): Imported {
  return { format, result, instances: [] };
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)} MiB`;
  return `${Math.round(bytes / 1024)} KiB`;
}
