import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { Tool, ToolOutput } from "@unforget/core";
import type { McpServerConfig } from "./mcp-config.ts";
import { type McpFailureKind, McpServerError } from "./mcp-errors.ts";
import { mcpToolName } from "./mcp-tool-name.ts";
import { type McpCallResult, mcpResultToToolOutput } from "./mcp-tool-output.ts";

/** Claude Code's default for a server's start and handshake (`MCP_TIMEOUT`). */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** One tool call; the session's own timeout, when shorter, aborts the call first. */
const DEFAULT_CALL_TIMEOUT_MS = 10 * 60_000;
/** Claude Code cuts longer tool descriptions; some servers put whole manuals there. */
const MAX_DESCRIPTION_LENGTH = 2048;
/** How much of a stdio server's stderr is kept for the error that reports its failure. */
const STDERR_TAIL_LENGTH = 2000;

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

/** The parts of the MCP SDK this module uses. */
interface McpSdk {
  Client: typeof Client;
  McpError: typeof import("@modelcontextprotocol/sdk/types.js").McpError;
  ErrorCode: typeof import("@modelcontextprotocol/sdk/types.js").ErrorCode;
}

let sdk: Promise<McpSdk> | undefined;

/**
 * The MCP SDK (and zod and ajv behind it, a few hundred modules) loads with the first server, so that a program
 * that imports this package but configures no server never pays for it at start-up.
 */
function loadSdk(): Promise<McpSdk> {
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

interface Connection {
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The SDK rejects a result that does not have the shape of the method's result with a zod error. */
function isShapeError(error: unknown): boolean {
  return error instanceof Error && (error.name === "ZodError" || error.name === "$ZodError");
}

function errorOutput(text: string): ToolOutput {
  return { content: text, isError: true };
}

/**
 * Starts every server at once and turns their tools into core `Tool`s named `mcp__<server>__<tool>`. A server
 * that fails to start, dies, or answers something that is not MCP is reported (`mcp-server-failed`) and its tools
 * are removed; the others, and the session, go on. Never throws.
 */
export function connectMcpServers(options: McpServersOptions): McpServers {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const clientInfo = options.clientInfo ?? { name: "unforget", version: "0" };
  const connections: Connection[] = [];
  let closed = false;

  const emit = (event: McpServerEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // An observer's failure is its own; the servers go on.
    }
  };

  const takenNames = () =>
    new Set(connections.flatMap((connection) => connection.tools.map((tool) => tool.name)));

  const fail = (connection: Connection, kind: McpFailureKind, message: string, cause?: unknown) => {
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
    emit({ type: "mcp-server-failed", server: connection.server, error });
  };

  const toTool = (
    { McpError, ErrorCode }: McpSdk,
    connection: Connection,
    client: Client,
    definition: McpTool,
    taken: Set<string>,
  ): Tool => {
    const name = mcpToolName(connection.server, definition.name, taken);
    taken.add(name);
    const description =
      definition.description ?? definition.title ?? `${definition.name} from ${connection.server}`;
    const readOnly = definition.annotations?.readOnlyHint === true;
    return {
      name,
      description:
        description.length > MAX_DESCRIPTION_LENGTH
          ? `${description.slice(0, MAX_DESCRIPTION_LENGTH)}… [cut]`
          : description,
      inputSchema: definition.inputSchema as Record<string, unknown>,
      readOnly,
      concurrencySafe: readOnly,
      // Whatever its hints say (read-only and idempotent promise no side effects, not the same answer later), a
      // call may not come back the same, or at all once the server is gone: saved before it is cleared.
      resultRetention: "persist",
      timeoutMs: callTimeoutMs,
      async execute(input, context) {
        if (connection.client !== client)
          return errorOutput(
            `The MCP server "${connection.server}" is no longer available${connection.error ? ` (${connection.error.message})` : ""}; its tools were removed. Do not call them again.`,
          );
        try {
          const result = (await client.callTool({ name: definition.name, arguments: input }, undefined, {
            signal: context.signal,
            timeout: callTimeoutMs,
          })) as McpCallResult;
          return mcpResultToToolOutput(result);
        } catch (error) {
          if (context.signal.aborted) return errorOutput(`The call to ${name} was interrupted.`);
          if (isShapeError(error)) {
            fail(
              connection,
              "protocol",
              `answered a call to ${definition.name} with something that is not an MCP result (${describe(error)}); its tools were removed.`,
              error,
            );
            return errorOutput(
              `The MCP server "${connection.server}" answered with something that is not a tool result; it was disconnected and its tools removed.`,
            );
          }
          if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
            return errorOutput(
              `${name} did not answer within ${callTimeoutMs} ms; the call was cancelled. Try again with a smaller request, or do without it.`,
            );
          if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed)
            return errorOutput(`${name} failed: ${error.message}`);
          fail(
            connection,
            "closed",
            `went away during a call to ${definition.name} (${describe(error)}); its tools were removed.`,
            error,
          );
          return errorOutput(
            `The MCP server "${connection.server}" went away during the call; its tools were removed.`,
          );
        }
      },
    };
  };

  const listTools = async (
    { McpError, ErrorCode }: McpSdk,
    client: Client,
    remaining: () => number,
  ): Promise<McpTool[]> => {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const timeout = remaining();
      if (timeout <= 0) throw new McpError(ErrorCode.RequestTimeout, "no time left to list the tools");
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  };

  const transportFor = async (connection: Connection): Promise<Transport> => {
    const config = connection.config;
    if (config.type === "http") {
      const { StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/sdk/client/streamableHttp.js"
      );
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
      });
    }
    const { getDefaultEnvironment, StdioClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/stdio.js"
    );
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...(options.env ?? getDefaultEnvironment()), ...config.env },
      cwd: options.cwd,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      connection.stderrTail = (connection.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_LENGTH);
    });
    return transport;
  };

  const connect = async (connection: Connection) => {
    let loaded: McpSdk;
    let transport: Transport;
    try {
      loaded = await loadSdk();
      transport = await transportFor(connection);
    } catch (error) {
      fail(connection, "start", `could not be started (${describe(error)}).`, error);
      return;
    }
    // Closed while the SDK loaded: nothing was started (a transport starts with `connect`), and nothing must be.
    if (connection.state !== "connecting") return;
    const { Client, McpError, ErrorCode } = loaded;
    const client = new Client(clientInfo, {
      capabilities: {},
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (connection.client !== client) return;
            if (error !== null || tools === null) {
              fail(
                connection,
                "protocol",
                `could not list its changed tools (${describe(error)}); its tools were removed.`,
                error,
              );
              return;
            }
            const taken = takenNames();
            for (const tool of connection.tools) taken.delete(tool.name);
            connection.tools = tools.map((tool) => toTool(loaded, connection, client, tool, taken));
            emit({
              type: "mcp-server-tools-changed",
              server: connection.server,
              tools: connection.tools.map((tool) => tool.name),
            });
          },
        },
      },
    });
    client.onclose = () => {
      // While connecting, the failed handshake says why (below); afterwards a close means the server went away.
      if (connection.client === client && connection.state === "connected")
        fail(
          connection,
          "closed",
          "closed the connection (it exited or was stopped); its tools were removed.",
        );
    };
    client.onerror = (error) => {
      // While connecting, errors end in the failed handshake, which reports them once.
      if (connection.client !== client || connection.state !== "connected") return;
      emit({
        type: "mcp-server-warning",
        server: connection.server,
        error: new McpServerError(
          `The MCP server "${connection.server}" sent something that is not MCP: ${describe(error)}`,
          {
            server: connection.server,
            kind: "protocol",
            cause: error,
          },
        ),
      });
    };
    connection.client = client;
    const started = Date.now();
    try {
      // The handshake and each page of the tool list share one budget; the SDK cancels a request past it.
      await client.connect(transport, { timeout: connectTimeoutMs });
      const tools = await listTools(loaded, client, () => connectTimeoutMs - (Date.now() - started));
      if (connection.client !== client) return;
      const taken = takenNames();
      connection.tools = tools.map((tool) => toTool(loaded, connection, client, tool, taken));
      connection.instructions = client.getInstructions();
      connection.state = "connected";
      emit({
        type: "mcp-server-connected",
        server: connection.server,
        tools: connection.tools.map((tool) => tool.name),
      });
    } catch (error) {
      if (connection.client !== client) return;
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
        fail(
          connection,
          "timeout",
          `did not start and list its tools within ${connectTimeoutMs} ms; it was stopped.`,
          error,
        );
      else if (isShapeError(error))
        fail(
          connection,
          "protocol",
          `answered the handshake with something that is not MCP (${describe(error)}).`,
          error,
        );
      else if (connection.config.type === "stdio" && (error as { code?: unknown }).code === "ENOENT")
        fail(
          connection,
          "start",
          `could not be started: its command "${connection.config.command}" was not found (install it, or correct "command" in the config).`,
          error,
        );
      else fail(connection, "start", `could not be started (${describe(error)}).`, error);
    }
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
    connection.ready = connect(connection);
    connections.push(connection);
  }

  const statusOf = (connection: Connection): McpServerStatus => ({
    server: connection.server,
    transport: connection.config.type,
    state: connection.state,
    tools: connection.tools.map((tool) => tool.name),
    ...(connection.instructions === undefined ? {} : { instructions: connection.instructions }),
    ...(connection.error === undefined ? {} : { error: connection.error }),
  });
  const status = (): McpServerStatus[] => connections.map(statusOf);

  return {
    async ready() {
      await Promise.all(connections.map((connection) => connection.ready));
      return status();
    },
    tools: () => connections.flatMap((connection) => connection.tools),
    status,
    async reconnect(server) {
      const connection = connections.find((candidate) => candidate.server === server);
      if (connection === undefined || closed)
        throw new McpServerError(
          closed
            ? `The MCP servers were closed; "${server}" cannot be connected again.`
            : `There is no MCP server "${server}"; the servers are ${connections.map((candidate) => candidate.server).join(", ") || "none"}.`,
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
      connection.ready = connect(connection);
      await connection.ready;
      return statusOf(connection);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(
        connections.map(async (connection) => {
          const client = connection.client;
          connection.client = undefined;
          connection.tools = [];
          if (connection.state !== "failed") connection.state = "closed";
          await client?.close().catch(() => undefined);
        }),
      );
    },
  };
}
