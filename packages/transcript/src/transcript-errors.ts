import { UnforgetError } from "@unforget/core";

/** A transcript could not be read as a whole (e.g. its file is not JSONL at all). */
export class TranscriptCorruptError extends UnforgetError {
  readonly path: string | undefined;
  readonly line: number | undefined;

  constructor(message: string, details: { path?: string; line?: number; cause?: unknown } = {}) {
    super("transcript_corrupt", message, { cause: details.cause });
    this.path = details.path;
    this.line = details.line;
  }
}

/** A transcript file does not exist where it was expected. */
export class TranscriptNotFoundError extends UnforgetError {
  readonly path: string;

  constructor(message: string, details: { path: string; cause?: unknown }) {
    super("transcript_not_found", message, { cause: details.cause });
    this.path = details.path;
  }
}

/** A transcript file exists (or may) but could not be read: a permission, a folder in its place, an I/O error. */
export class TranscriptReadError extends UnforgetError {
  readonly path: string;

  constructor(message: string, details: { path: string; cause?: unknown }) {
    super("transcript_read", message, { cause: details.cause });
    this.path = details.path;
  }
}

/** Appending to a transcript failed; the entry was not written. */
export class TranscriptWriteError extends UnforgetError {
  readonly path: string;

  constructor(message: string, details: { path: string; cause?: unknown }) {
    super("transcript_write", message, { cause: details.cause });
    this.path = details.path;
  }
}
