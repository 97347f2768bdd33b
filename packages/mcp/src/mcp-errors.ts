import { UnforgetError } from "@unforget/core";

/** An `.mcp.json` file (or a server config passed in code) cannot be used; the message names the file and key. */
export class McpConfigError extends UnforgetError {
  /** The file the config came from, when it came from one. */
  readonly file: string | undefined;
  /** The JSON path of the bad value, e.g. `mcpServers.github.headers.Authorization`. */
  readonly key: string;

  constructor(message: string, details: { file?: string; key: string; cause?: unknown }) {
    super("mcp_config", message, { cause: details.cause });
    this.file = details.file;
    this.key = details.key;
  }
}

/**
 * Why a server was dropped or a call failed: it did not start (`start`), did not finish the handshake in time
 * (`timeout`), went away (`closed`), or answered something that is not MCP (`protocol`); or a reconnect named a
 * server that is not configured (`unknown`).
 */
export type McpFailureKind = "start" | "timeout" | "closed" | "protocol" | "unknown";

/** An MCP server failed; reported through `onEvent`, never thrown out of a session. */
export class McpServerError extends UnforgetError {
  /** The server's name in the config. */
  readonly server: string;
  readonly kind: McpFailureKind;
  /** What happened, in one sentence: the message without the server's stderr (for a one-line report). */
  readonly summary: string;
  /** The end of what a stdio server wrote on stderr before it failed, when it wrote anything. */
  readonly stderr: string | undefined;

  constructor(
    message: string,
    details: { server: string; kind: McpFailureKind; cause?: unknown; stderr?: string },
  ) {
    const stderr = details.stderr?.trim() || undefined;
    super("mcp_server", stderr === undefined ? message : `${message} Its last output on stderr: ${stderr}`, {
      cause: details.cause,
    });
    this.server = details.server;
    this.kind = details.kind;
    this.summary = message;
    this.stderr = stderr;
  }
}
