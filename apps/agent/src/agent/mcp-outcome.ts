import type { SessionMcpServerError, SessionMcpServerStatus } from "@unforget/session";

/** Words that mark the line of a server's stderr that says what went wrong. */
const ERROR_LINE = /\b(error|fatal|cannot|can't|not found|no such|denied|missing|refused|invalid)\b/i;
const MAX_STDERR_LINE = 200;

/** The line of a failed server's stderr that most likely says why: the last one that reads as an error. */
function telltaleLine(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^at\s/.test(line));
  const line = lines.findLast((candidate) => ERROR_LINE.test(candidate)) ?? lines.at(-1) ?? "";
  return line.length > MAX_STDERR_LINE ? `${line.slice(0, MAX_STDERR_LINE - 1)}…` : line;
}

/** Why a server failed, in one line: the error's sentence and the telling line of its stderr. */
export function describeMcpFailure(error: SessionMcpServerError): string {
  return error.stderr ? `${error.summary} Its stderr says: ${telltaleLine(error.stderr)}` : error.summary;
}

/**
 * One line about where an MCP server stands, for the REPL's start-up lines and `-p`'s stderr: its name and,
 * when it failed, why (the error's sentence and the telling line of its stderr; `/mcp` shows all of it).
 */
export function describeMcpOutcome(status: SessionMcpServerStatus): string {
  switch (status.state) {
    case "connected":
      return `MCP server "${status.server}" connected: ${status.tools.length} tool${status.tools.length === 1 ? "" : "s"}.`;
    case "failed":
      return status.error ? describeMcpFailure(status.error) : `The MCP server "${status.server}" failed.`;
    case "connecting":
      return `MCP server "${status.server}" is still connecting.`;
    case "closed":
      return `MCP server "${status.server}" was closed.`;
  }
}
