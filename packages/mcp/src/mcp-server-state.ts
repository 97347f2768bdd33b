import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@unforget/core";
import type { McpServerConfig } from "./mcp-config.ts";
import { type McpFailureKind, McpServerError } from "./mcp-errors.ts";
import type { McpServerEvent, McpServerState, McpServerStatus, McpServersOptions } from "./mcp-servers.ts";

/** The parts of the MCP SDK this package uses. */
export interface McpSdk {
  Client: typeof Client;
  McpError: typeof import("@modelcontextprotocol/sdk/types.js").McpError;
  ErrorCode: typeof import("@modelcontextprotocol/sdk/types.js").ErrorCode;
}

let sdk: Promise<McpSdk> | undefined;

/**
 * The MCP SDK (and zod and ajv behind it, a few hundred modules) loads with the first server, so that a program
 * that imports this package but configures no server never pays for it at start-up.
 */
export function loadSdk(): Promise<McpSdk> {
  sdk ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([client, types]) => ({
    Client: client.Client,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  }));
  return sdk;
}

/** One configured server: its config, where it stands, and the client and tools it has while connected. */
export interface Connection {
  readonly server: string;
  readonly config: McpServerConfig;
  state: McpServerState;
  client?: Client;
  tools: Tool[];
  instructions?: string;
  error?: McpServerError;
  stderrTail: string;
  ready: Promise<void>;
}

/** Everything the servers of one `connectMcpServers` call share; each piece of the module works on it. */
export interface McpServersState {
  readonly options: McpServersOptions;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly clientInfo: { name: string; version: string };
  /** In config order. */
  readonly connections: Connection[];
  closed: boolean;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The SDK rejects a result that does not have the shape of the method's result with a zod error. */
export function isShapeError(error: unknown): boolean {
  return error instanceof Error && (error.name === "ZodError" || error.name === "$ZodError");
}

/** Tells the observer; its failure is its own, and the servers go on. */
export function emit(state: McpServersState, event: McpServerEvent): void {
  try {
    state.options.onEvent?.(event);
  } catch {
    // An observer's failure is its own; the servers go on.
  }
}

/** The tool names every server holds now, so that a new name does not collide with one. */
export function takenNames(state: McpServersState): Set<string> {
  return new Set(state.connections.flatMap((connection) => connection.tools.map((tool) => tool.name)));
}

/** Drops a server: it is marked failed, its tools removed, its client closed, and `mcp-server-failed` emitted. */
export function fail(
  state: McpServersState,
  connection: Connection,
  kind: McpFailureKind,
  message: string,
  cause?: unknown,
): void {
  if (connection.state === "failed" || connection.state === "closed") return;
  const error = new McpServerError(`The MCP server "${connection.server}" ${message}`, {
    server: connection.server,
    kind,
    cause,
    stderr: connection.stderrTail,
  });
  connection.state = "failed";
  connection.error = error;
  connection.tools = [];
  const client = connection.client;
  connection.client = undefined;
  void client?.close().catch(() => undefined);
  emit(state, { type: "mcp-server-failed", server: connection.server, error });
}

export function statusOf(connection: Connection): McpServerStatus {
  return {
    server: connection.server,
    transport: connection.config.type,
    state: connection.state,
    tools: connection.tools.map((tool) => tool.name),
    ...(connection.instructions === undefined ? {} : { instructions: connection.instructions }),
    ...(connection.error === undefined ? {} : { error: connection.error }),
  };
}
