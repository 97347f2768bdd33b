import { UnforgetError } from "@unforget/core";

/** What is wrong with the session the user pointed at. */
export type SessionInputKind =
  | "not_found"
  | "not_a_file"
  | "unreadable"
  | "empty"
  | "binary"
  | "too_large"
  | "unrecognized"
  | "no_model_calls";

/** The session cannot be replayed: the message says what was found and what to do. */
export class SessionInputError extends UnforgetError {
  readonly path: string;
  readonly kind: SessionInputKind;

  constructor(message: string, details: { path: string; kind: SessionInputKind; cause?: unknown }) {
    super("replay_session_input", message, { cause: details.cause });
    this.path = details.path;
    this.kind = details.kind;
  }
}

/** A command-line option has a value the command cannot use; the message names the option and the accepted forms. */
export class OptionValueError extends UnforgetError {
  readonly option: string;

  constructor(option: string, message: string) {
    super("replay_option", message);
    this.option = option;
  }
}

/** An output (report, dump folder) cannot be written where the user asked. */
export class OutputError extends UnforgetError {
  readonly path: string;

  constructor(message: string, details: { path: string; cause?: unknown }) {
    super("replay_output", message, { cause: details.cause });
    this.path = details.path;
  }
}
