import { UnforgetError, type UnforgetErrorOptions } from "@unforget/core";

/** The codes of the session's own errors. */
export type SessionErrorCode =
  | "session_busy"
  | "session_closed"
  | "session_not_found"
  | "session_package_missing";

/** `send`, `compact` or `clear` was called while a turn is running; one thing at a time. */
export class SessionBusyError extends UnforgetError {
  constructor(operation: string) {
    super(
      "session_busy",
      `${operation} was called while a turn is still running. Wait for the turn to end (await turn.result()), or interrupt it with session.interrupt() first.`,
    );
  }
}

/** The session was closed; nothing more can be sent through it. */
export class SessionClosedError extends UnforgetError {
  constructor(operation: string) {
    super(
      "session_closed",
      `${operation} was called on a closed session. Resume it in a new one: createAgentSession({ resume: sessionId, … }).`,
    );
  }
}

/** `resume` named a session whose transcript is not in `sessionsDir`. */
export class SessionNotFoundError extends UnforgetError {
  readonly sessionId: string;
  readonly path: string;

  constructor(sessionId: string, path: string, options?: UnforgetErrorOptions) {
    super(
      "session_not_found",
      `There is no session ${sessionId} to resume: ${path} does not exist. List the sessions with listSessions(sessionsDir), or check sessionsDir.`,
      options,
    );
    this.sessionId = sessionId;
    this.path = path;
  }
}

/**
 * An option needs a package the session loads on first use (`memory` needs `@unforget/memory`, `tasks`
 * `@unforget/tasks`, `mcpServers` as configs `@unforget/mcp`), and it is not installed.
 */
export class SessionPackageMissingError extends UnforgetError {
  /** The package to install. */
  readonly packageName: string;
  /** The session option that needs it. */
  readonly option: string;

  constructor(packageName: string, option: string, options?: UnforgetErrorOptions) {
    super(
      "session_package_missing",
      `The session option ${option} needs ${packageName}, which is not installed. Install it beside @unforget/session (npm install ${packageName}), or leave ${option} out.`,
      options,
    );
    this.packageName = packageName;
    this.option = option;
  }
}

/** An error's message, or what was thrown as text, for the messages that say what failed. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
