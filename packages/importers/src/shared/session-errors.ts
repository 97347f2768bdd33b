import { UnforgetError } from "@unforget/core";
import type { SessionFormatAttempt } from "../session/detect-session-format.ts";

/** An importer could not read its input at all (as opposed to repairable defects, which are reported). */
export class ImportError extends UnforgetError {
  readonly format: string;

  constructor(message: string, details: { format: string; cause?: unknown }) {
    super("import_failed", message, { cause: details.cause });
    this.format = details.format;
  }
}

/** Why a session file could not be read at all. */
export type SessionFileErrorKind =
  | "not_found"
  | "not_a_file"
  | "unreadable"
  | "empty"
  | "binary"
  | "too_large";

/** A session file that cannot be read: missing, a folder, unreadable, empty, binary or too large. */
export class SessionFileError extends ImportError {
  readonly path: string;
  /** What is wrong with the file, for callers that react differently (e.g. skip empty files). */
  readonly kind: SessionFileErrorKind;

  constructor(message: string, details: { path: string; kind: SessionFileErrorKind; cause?: unknown }) {
    super(message, { format: "unknown", cause: details.cause });
    this.path = details.path;
    this.kind = details.kind;
  }
}

/** A source whose content fits no session format; `attempts` says why each format did not fit. */
export class UnrecognizedSessionError extends ImportError {
  /** The file, when the source was one. */
  readonly path: string | undefined;
  readonly attempts: readonly SessionFormatAttempt[];

  constructor(attempts: readonly SessionFormatAttempt[], path?: string) {
    super(
      `${path ?? "The text"} is not a session in any format Unforget imports. Tried:\n${attempts
        .map((attempt) => `- ${attempt.format}: ${attempt.reason}`)
        .join("\n")}\nIf you know the format, pass it as { format }.`,
      { format: "unknown" },
    );
    this.path = path;
    this.attempts = attempts;
  }
}
