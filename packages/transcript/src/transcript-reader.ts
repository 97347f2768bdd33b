import { appendFile, readFile } from "node:fs/promises";
import { TranscriptNotFoundError, TranscriptReadError, TranscriptWriteError } from "./transcript-errors.ts";
import type { ParsedTranscript, TranscriptProblem } from "./transcript-parse.ts";
import { parseTranscript } from "./transcript-parse.ts";

export interface ReadTranscriptOptions {
  /**
   * Copy torn and invalid lines to `<path>.bad` (default true). The quarantine is idempotent: a line already
   * there (same line number and text) is not added again. Unknown entries are not quarantined: they are valid
   * data from a newer writer and stay readable in `unknownEntries`.
   */
  quarantine?: boolean;
}

export interface ReadTranscriptResult extends ParsedTranscript {
  /** Path of the quarantine file when at least one line is in it, otherwise undefined. */
  quarantinePath: string | undefined;
  /** How many lines this read added to the quarantine (0 when they were all there already). */
  quarantinedNow: number;
}

/** One line of the quarantine file. */
export interface QuarantinedLine {
  line: number;
  reason: string;
  raw: string;
}

/** The quarantine file for a transcript path. */
export function transcriptQuarantinePath(path: string): string {
  return `${path}.bad`;
}

/**
 * Reads a JSONL transcript. A torn last line (crash mid-write) and invalid lines are reported in `problems`
 * with their line numbers and copied to `<path>.bad`; nothing is dropped silently. Throws
 * `TranscriptNotFoundError` when the file does not exist and `TranscriptCorruptError` when it is not JSONL.
 */
export async function readTranscript(
  path: string,
  options: ReadTranscriptOptions = {},
): Promise<ReadTranscriptResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw transcriptReadError(path, error);
  }
  const parsed = parseTranscript(text, { path });
  const bad = parsed.problems.filter((problem) => problem.kind !== "unknown_entry");
  if (options.quarantine === false || bad.length === 0) {
    return { ...parsed, quarantinePath: undefined, quarantinedNow: 0 };
  }
  const quarantinePath = transcriptQuarantinePath(path);
  const quarantinedNow = await quarantine(quarantinePath, bad);
  return { ...parsed, quarantinePath, quarantinedNow };
}

async function quarantine(quarantinePath: string, problems: TranscriptProblem[]): Promise<number> {
  const known = new Set<string>();
  let existing = "";
  try {
    existing = await readFile(quarantinePath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw quarantineError(quarantinePath, error);
  }
  for (const line of existing.split("\n")) {
    if (line.trim().length === 0) continue;
    try {
      const value = JSON.parse(line) as Partial<QuarantinedLine>;
      known.add(quarantineKey(Number(value.line), String(value.raw)));
    } catch {
      // A damaged quarantine line is left as it is; the entry it described is written again below.
    }
  }
  const fresh = problems.filter((problem) => !known.has(quarantineKey(problem.line, problem.raw)));
  if (fresh.length === 0) return 0;
  const prefix = existing.length > 0 && !existing.endsWith("\n") ? "\n" : "";
  const body = fresh
    .map((problem) => JSON.stringify({ line: problem.line, reason: problem.reason, raw: problem.raw }))
    .join("\n");
  try {
    await appendFile(quarantinePath, `${prefix}${body}\n`, "utf8");
  } catch (error) {
    throw quarantineError(quarantinePath, error);
  }
  return fresh.length;
}

/**
 * The error for a transcript that cannot be opened or read: `TranscriptNotFoundError` when it does not exist,
 * else `TranscriptReadError`. Shared with `streamTranscript`.
 */
export function transcriptReadError(
  path: string,
  error: unknown,
): TranscriptReadError | TranscriptNotFoundError {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") {
    return new TranscriptNotFoundError(
      `Transcript ${path} does not exist; check the session id or path (a new session starts with TranscriptWriter.open).`,
      { path, cause: error },
    );
  }
  return new TranscriptReadError(
    `Transcript ${path} could not be read (${error instanceof Error ? error.message : String(error)}); check that the path is a readable file.`,
    { path, cause: error },
  );
}

function quarantineKey(line: number, raw: string): string {
  return `${line}\u0000${raw}`;
}

function quarantineError(quarantinePath: string, error: unknown): TranscriptWriteError {
  return new TranscriptWriteError(
    `Could not write the quarantine file ${quarantinePath} (${error instanceof Error ? error.message : String(error)}); make its folder writable or read with { quarantine: false }.`,
    { path: quarantinePath, cause: error },
  );
}
