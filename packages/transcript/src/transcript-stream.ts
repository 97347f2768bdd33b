import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import { ConfigurationError, UnforgetError } from "@unforget/core";
import type { TranscriptEntry } from "./transcript-entry.ts";
import type { TranscriptProblem, UnknownTranscriptEntry } from "./transcript-parse.ts";
import { notTranscriptError, parseTranscriptLine } from "./transcript-parse.ts";
import { transcriptReadError } from "./transcript-reader.ts";

export interface StreamTranscriptOptions {
  /**
   * Byte offset to start reading at (default 0): the start of the file or an `offset` an earlier item reported.
   * An offset inside a line reads the rest of that line as a line of its own.
   */
  fromOffset?: number;
  /** Line number of the line at `fromOffset` (default 1). Pass `item.line + 1` to keep the file's line numbers. */
  fromLine?: number;
  /** Bytes read per chunk (default 65536). Only memory use depends on it, never the items. */
  chunkSize?: number;
  /**
   * A last line without a newline: "parse" (default) reads it like `readTranscript` (an entry when it is
   * valid, a `torn_line` problem otherwise); "stop" leaves it unread, so a reader following a live file
   * resumes at the last complete line and sees the line once the writer has finished it.
   */
  partialLastLine?: "parse" | "stop";
}

interface StreamItemBase {
  /** 1-based line number (counted from `fromLine`). */
  line: number;
  /** Byte offset right after this line (after its newline): pass it as `fromOffset` to continue after it. */
  offset: number;
}

/** A valid entry, in file order. */
export interface TranscriptStreamEntry extends StreamItemBase {
  kind: "entry";
  entry: TranscriptEntry;
}

/** A line that is not a valid entry; for `unknown_entry` the kept entry from a newer writer comes with it. */
export interface TranscriptStreamProblem extends StreamItemBase {
  kind: "problem";
  problem: TranscriptProblem;
  unknownEntry?: UnknownTranscriptEntry;
}

export type TranscriptStreamItem = TranscriptStreamEntry | TranscriptStreamProblem;

const DEFAULT_CHUNK_SIZE = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Reads a JSONL transcript line by line in fixed-size chunks (the file is never read whole), yielding each
 * entry or problem with its line number and the byte offset after it. Items are exactly what
 * `parseTranscript` gives for the same bytes (blank lines yield nothing), so a reader can stop anywhere and
 * resume later with `fromOffset`. Unlike `readTranscript` it writes no quarantine file. Throws
 * `TranscriptNotFoundError` for a missing file, and `TranscriptCorruptError` at the end of a read from offset 0
 * in which no complete line was a JSON object.
 */
export async function* streamTranscript(
  path: string,
  options: StreamTranscriptOptions = {},
): AsyncGenerator<TranscriptStreamItem, void, undefined> {
  const fromOffset = options.fromOffset ?? 0;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (!Number.isSafeInteger(fromOffset) || fromOffset < 0) {
    throw new ConfigurationError(
      `streamTranscript: fromOffset must be a byte offset (an integer ≥ 0), got ${fromOffset}.`,
      {
        setting: "fromOffset",
      },
    );
  }
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) {
    throw new ConfigurationError(
      `streamTranscript: chunkSize must be a positive integer, got ${chunkSize}.`,
      {
        setting: "chunkSize",
      },
    );
  }
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw transcriptReadError(path, error);
  }
  let line = options.fromLine ?? 1;
  let objectLines = 0;
  let completeLines = 0;
  let firstProblem: TranscriptProblem | undefined;
  const toItem = (text: string, end: number, unterminated: boolean): TranscriptStreamItem | undefined => {
    const parsed = parseTranscriptLine(text, line, unterminated);
    line++;
    if (parsed === undefined) return undefined;
    if (!unterminated) completeLines++;
    if (parsed.isObject) objectLines++;
    if (parsed.entry !== undefined)
      return { kind: "entry", entry: parsed.entry, line: line - 1, offset: end };
    const problem = parsed.problem!;
    firstProblem ??= problem;
    return {
      kind: "problem",
      problem,
      ...(parsed.unknownEntry === undefined ? {} : { unknownEntry: parsed.unknownEntry }),
      line: line - 1,
      offset: end,
    };
  };
  try {
    const chunk = Buffer.allocUnsafe(chunkSize);
    let position = await skipTerminatorOfReportedLine(handle, fromOffset);
    // Bytes of the line being assembled across chunks, and the file offset where it starts.
    let pending: Buffer[] = [];
    let pendingLength = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunkSize, position);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      const dataStart = position;
      position += bytesRead;
      let start = 0;
      for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, start)) {
        const bytes =
          pendingLength === 0
            ? data.subarray(start, newline)
            : Buffer.concat([...pending, data.subarray(start, newline)]);
        pending = [];
        pendingLength = 0;
        const item = toItem(bytes.toString("utf8"), dataStart + newline + 1, false);
        start = newline + 1;
        if (item !== undefined) yield item;
      }
      if (start < data.length) {
        // The chunk buffer is reused for the next read: keep a copy of the unfinished line.
        pending.push(Buffer.from(data.subarray(start)));
        pendingLength += data.length - start;
      }
    }
    if (pendingLength > 0 && options.partialLastLine !== "stop") {
      const item = toItem(Buffer.concat(pending).toString("utf8"), position, true);
      if (item !== undefined) yield item;
    }
  } catch (error) {
    // A read can fail after the open succeeded (a folder in the file's place, an I/O error).
    throw error instanceof UnforgetError ? error : transcriptReadError(path, error);
  } finally {
    await handle.close();
  }
  if (fromOffset === 0 && objectLines === 0 && completeLines > 0) {
    throw notTranscriptError(path, completeLines, firstProblem);
  }
}

/**
 * A read that resumes right after an unterminated last line (reported as torn, or as an entry without its
 * newline) may find that a writer has since put the newline there (the writer starts with one after a torn
 * tail). That newline ends the line already reported: it is skipped, so it does not count as a blank line.
 */
async function skipTerminatorOfReportedLine(handle: FileHandle, fromOffset: number): Promise<number> {
  if (fromOffset === 0) return 0;
  const probe = Buffer.alloc(2);
  const { bytesRead } = await handle.read(probe, 0, 2, fromOffset - 1);
  const resumesAfterUnterminatedLine = bytesRead === 2 && probe[0] !== NEWLINE && probe[1] === NEWLINE;
  return resumesAfterUnterminatedLine ? fromOffset + 1 : fromOffset;
}
