import { stat } from "node:fs/promises";
import type { Message } from "@unforget/core";
import {
  ImportError,
  type ImportProblem,
  type ImportResult,
  importSessionFile,
  SessionFileError,
  type SessionImport,
  UnrecognizedSessionError,
} from "@unforget/importers";
import { SessionInputError } from "./replay/replay-errors.ts";

/** The largest session file read (a larger one is refused before it is read). */
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
  /** For a file of several runs: which one this is (its 1-based line) and how many there are. */
  instance?: { line: number; count: number };
}

/**
 * Reads a session file (or a Claude Code session folder) with `importSessionFile`, which recognises the
 * format by content and opens the file read-only; `file.jsonl#N` picks the run on line N of a multi-run
 * file. Throws `SessionInputError` for a path that is missing, not a file, empty, binary, too large or in
 * no known format, with the message saying what to do.
 */
export async function loadSession(path: string): Promise<LoadedSession> {
  const { file, line } = await splitInstance(path);
  let imported: SessionImport;
  try {
    imported = await importSessionFile(file, { maxBytes: MAX_SESSION_BYTES });
  } catch (error) {
    throw explain(error, file);
  }
  let chosen: ImportResult = imported;
  let instance: LoadedSession["instance"];
  if (imported.instances.length > 0) {
    const runs = imported.instances;
    const wanted = line === undefined ? runs[0] : runs.find((run) => run.line === line);
    if (!wanted) {
      throw new SessionInputError(
        `${file} has no run on line ${line}; its runs are on lines ${runs.map((run) => run.line).join(", ")}.`,
        { path, kind: "not_found" },
      );
    }
    chosen = wanted.result;
    instance = { line: wanted.line, count: runs.length };
  }
  const messages = mainConversation(chosen);
  if (messages.length === 0) {
    throw new SessionInputError(
      `${file} is a ${imported.format} session with no conversation in it: nothing to replay.`,
      { path, kind: "no_model_calls" },
    );
  }
  const model = [...messages]
    .reverse()
    .find((message) => message.role === "assistant" && message.model)?.model;
  return {
    path: imported.path ?? file,
    format: imported.format,
    messages,
    ...(chosen.system !== undefined ? { system: chosen.system } : {}),
    ...(model !== undefined ? { model } : {}),
    problems: chosen.report.problems.map(describeProblem),
    sidechainSkipped: chosen.report.counts.sidechainSkipped,
    ...(instance ? { instance } : {}),
  };
}

/**
 * A defect the importer worked around, with where it is: "line 6: the line is not valid JSON (expected property
 * name or '}' at column 30); it was skipped." A character position within a line is its column.
 */
function describeProblem(problem: ImportProblem): string {
  const { line, index, eventId } = problem.location;
  const where =
    line !== undefined
      ? `line ${line}`
      : index !== undefined
        ? `item ${index + 1}`
        : eventId !== undefined
          ? `event ${eventId}`
          : undefined;
  let text = problem.description;
  if (line !== undefined)
    text = text.replace(
      / in JSON at position (\d+)(?: \(line \d+ column \d+\))?/g,
      (_, position: string) => ` at column ${Number(position) + 1}`,
    );
  if (where === undefined) return text;
  return `${where}: ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

/** All segments' messages: a session that compacted itself is replayed from its start, without its own summaries. */
function mainConversation(result: ImportResult): Message[] {
  const messages: Message[] = [];
  for (const entry of result.entries) {
    if (entry.type === "message" && !entry.message.isCompactSummary) messages.push(entry.message);
  }
  return messages.length > 0 ? messages : result.messages;
}

/** `file#N` names a run of a multi-run file, unless a file by that very name exists. */
async function splitInstance(path: string): Promise<{ file: string; line?: number }> {
  const match = /^(.*)#(\d+)$/.exec(path);
  if (!match) return { file: path };
  const exists = await stat(path).then(
    () => true,
    () => false,
  );
  return exists ? { file: path } : { file: match[1]!, line: Number(match[2]) };
}

/** The importer's error, as the command line says it. */
function explain(error: unknown, path: string): unknown {
  if (error instanceof SessionFileError) {
    const message =
      error.kind === "too_large"
        ? error.message.replace(
            / importSessionFile reads \(option maxBytes\); it was not read\. Split the session or raise maxBytes\./,
            " a session may have here; it was not read. Replay a smaller session (or one run of it).",
          )
        : error.message;
    return new SessionInputError(message, { path, kind: error.kind, cause: error });
  }
  if (error instanceof UnrecognizedSessionError) {
    return new SessionInputError(
      error.message.replace(/\nIf you know the format, pass it as \{ format \}\.$/, ""),
      { path, kind: "unrecognized", cause: error },
    );
  }
  if (error instanceof ImportError) {
    return new SessionInputError(`${path} could not be imported: ${error.message}`, {
      path,
      kind: "unrecognized",
      cause: error,
    });
  }
  return error;
}
