import type { Tool } from "@unforget/core";
import type { McpServerConfig } from "./mcp-config.ts";
import { McpServerError } from "./mcp-errors.ts";
import { connect } from "./mcp-server-connect.ts";
import { type Connection, type McpServersState, statusOf } from "./mcp-server-state.ts";

/** Claude Code's default for a server's start and handshake (`MCP_TIMEOUT`). */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** One tool call; the session's own timeout, when shorter, aborts the call first. */
const DEFAULT_CALL_TIMEOUT_MS = 10 * 60_000;

export type McpServerState = "connecting" | "connected" | "failed" | "closed";

/** Where one server stands; `McpServers.status()` lists them in config order. */
export interface McpServerStatus {
  server: string;
  transport: McpServerConfig["type"];
  state: McpServerState;
  /** The names the model calls (empty unless connected). */
  tools: string[];
  /** The server's `instructions` from its handshake, for the system prompt. */
  instructions?: string;
  /** Why the server was dropped, when `state` is `failed`. */
  error?: McpServerError;
}

/** What happens to servers, as it happens. */
export type McpServerEvent =
  | { type: "mcp-server-connected"; server: string; tools: string[] }
  | { type: "mcp-server-tools-changed"; server: string; tools: string[] }
  /** The server is gone and its tools were removed; the session goes on without it. */
  | { type: "mcp-server-failed"; server: string; error: McpServerError }
  /** Noise the server survived (a line on stdout that is not JSON-RPC); reported, nothing removed. */
  | { type: "mcp-server-warning"; server: string; error: McpServerError };

export interface McpServersOptions {
  /** Servers by name, e.g. from `readMcpConfig(".mcp.json")`. */
  servers: Record<string, McpServerConfig>;
  /** Working directory of stdio servers; default `process.cwd()`. */
  cwd?: string;
  /**
   * Environment every stdio server starts with, before its own `env`. Default: the MCP SDK's short list of
   * harmless variables (`HOME`, `PATH`, `USER`, …), so that provider credentials never reach a server that was
   * not given them by name (Claude Code passes its whole environment).
   */
  env?: Record<string, string>;
  /** Most milliseconds from start to a listed set of tools; then the server is dropped. Default 30 s. */
  connectTimeoutMs?: number;
  /** Most milliseconds one tool call may take; then it is cancelled and the model told. Default 10 min. */
  callTimeoutMs?: number;
  /** Called with every event; a callback that throws is ignored. */
  onEvent?: (event: McpServerEvent) => void;
  /** How this client introduces itself in the handshake. */
  clientInfo?: { name: string; version: string };
}

/** The servers of one session and their tools. */
export interface McpServers {
  /** Resolves once every server is connected or failed (it never rejects); the statuses, in config order. */
  ready(): Promise<McpServerStatus[]>;
  /** The tools of the servers connected now; read it before each model call, as servers come and go. */
  tools(): Tool[];
  /** Every server's state now, in config order. */
  status(): McpServerStatus[];
  /**
   * Stops one server (whatever its state) and connects it again from its config, e.g. after the user fixed
   * what made it fail; resolves with its new status once it is connected or failed (never rejects). Throws
   * `McpServerError` (kind "unknown") for a name that is not configured, and after `close()`.
   */
  reconnect(server: string): Promise<McpServerStatus>;
  /** Closes every connection and stops every stdio server; idempotent. */
  close(): Promise<void>;
}

/**
 * Starts every server at once and turns their tools into core `Tool`s named `mcp__<server>__<tool>`. A server
 * that fails to start, dies, or answers something that is not MCP is reported (`mcp-server-failed`) and its tools
 * are removed; the others, and the session, go on. Never throws.
 */
export function connectMcpServers(options: McpServersOptions): McpServers {
  const state: McpServersState = {
    options,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    callTimeoutMs: options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    clientInfo: options.clientInfo ?? { name: "unforget", version: "0" },
    connections: [],
    closed: false,
  };
  for (const [server, config] of Object.entries(options.servers)) {
    const connection: Connection = {
      server,
      config,
      state: "connecting",
      tools: [],
      stderrTail: "",
      ready: Promise.resolve(),
    };
    connection.ready = connect(state, connection);
    state.connections.push(connection);
  }
  const status = (): McpServerStatus[] => state.connections.map(statusOf);
  return {
    async ready() {
      await Promise.all(state.connections.map((connection) => connection.ready));
      return status();
    },
    tools: () => state.connections.flatMap((connection) => connection.tools),
    status,
    reconnect: (server) => reconnect(state, server),
    close: () => close(state),
  };
}

/** Stops one server, whatever its state, and connects it again from its config. */
async function reconnect(state: McpServersState, server: string): Promise<McpServerStatus> {
  const connection = state.connections.find((candidate) => candidate.server === server);
  if (connection === undefined || state.closed)
    throw new McpServerError(
      state.closed
        ? `The MCP servers were closed; "${server}" cannot be connected again.`
        : `There is no MCP server "${server}"; the servers are ${state.connections.map((candidate) => candidate.server).join(", ") || "none"}.`,
      { server, kind: "unknown" },
    );
  const client = connection.client;
  // The old client's close and errors are ignored from here on: its `connection.client` is no longer it.
  connection.client = undefined;
  connection.state = "connecting";
  connection.tools = [];
  connection.stderrTail = "";
  delete connection.error;
  delete connection.instructions;
  await client?.close().catch(() => undefined);
  connection.ready = connect(state, connection);
  await connection.ready;
  return statusOf(connection);
}

/** Closes every connection once; a failed server stays failed, the others become closed. */
async function close(state: McpServersState): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  await Promise.all(
    state.connections.map(async (connection) => {
      const client = connection.client;
      connection.client = undefined;
      connection.tools = [];
      if (connection.state !== "failed") connection.state = "closed";
      await client?.close().catch(() => undefined);
    }),
  );
}
