import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { McpServerError } from "./mcp-errors.ts";
import {
  type Connection,
  describe,
  emit,
  fail,
  isShapeError,
  loadSdk,
  type McpSdk,
  type McpServersState,
  takenNames,
} from "./mcp-server-state.ts";
import { toTool } from "./mcp-server-tool.ts";

/** How much of a stdio server's stderr is kept for the error that reports its failure. */
const STDERR_TAIL_LENGTH = 2000;

/**
 * Starts one server, shakes hands and lists its tools within the connect budget; the connection ends connected
 * (with `mcp-server-connected`) or failed (with `mcp-server-failed`). Never rejects.
 */
export async function connect(state: McpServersState, connection: Connection): Promise<void> {
  let loaded: McpSdk;
  let transport: Transport;
  try {
    loaded = await loadSdk();
    transport = await transportFor(state, connection);
  } catch (error) {
    fail(state, connection, "start", `could not be started (${describe(error)}).`, error);
    return;
  }
  // Closed while the SDK loaded: nothing was started (a transport starts with `connect`), and nothing must be.
  if (connection.state !== "connecting") return;
  const client = createClient(state, loaded, connection);
  connection.client = client;
  const started = Date.now();
  try {
    // The handshake and each page of the tool list share one budget; the SDK cancels a request past it.
    await client.connect(transport, { timeout: state.connectTimeoutMs });
    const tools = await listTools(loaded, client, () => state.connectTimeoutMs - (Date.now() - started));
    if (connection.client !== client) return;
    const taken = takenNames(state);
    connection.tools = tools.map((tool) => toTool(state, loaded, connection, client, tool, taken));
    connection.instructions = client.getInstructions();
    connection.state = "connected";
    emit(state, {
      type: "mcp-server-connected",
      server: connection.server,
      tools: connection.tools.map((tool) => tool.name),
    });
  } catch (error) {
    if (connection.client !== client) return;
    failConnect(state, loaded, connection, error);
  }
}

/** Reports why the handshake or the tool list failed, in the words that help the user fix it. */
function failConnect(
  state: McpServersState,
  { McpError, ErrorCode }: McpSdk,
  connection: Connection,
  error: unknown,
): void {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
    fail(
      state,
      connection,
      "timeout",
      `did not start and list its tools within ${state.connectTimeoutMs} ms; it was stopped.`,
      error,
    );
  else if (isShapeError(error))
    fail(
      state,
      connection,
      "protocol",
      `answered the handshake with something that is not MCP (${describe(error)}).`,
      error,
    );
  else if (connection.config.type === "stdio" && (error as { code?: unknown }).code === "ENOENT")
    fail(
      state,
      connection,
      "start",
      `could not be started: its command "${connection.config.command}" was not found (install it, or correct "command" in the config).`,
      error,
    );
  else fail(state, connection, "start", `could not be started (${describe(error)}).`, error);
}

/**
 * A client for one connection that follows the server's changed tools, drops the server when it closes, and
 * reports noise as warnings. Its callbacks do nothing once it is no longer the connection's client.
 */
function createClient(state: McpServersState, loaded: McpSdk, connection: Connection): Client {
  const client: Client = new loaded.Client(state.clientInfo, {
    capabilities: {},
    listChanged: {
      tools: {
        onChanged: (error, tools) => {
          if (connection.client !== client) return;
          if (error !== null || tools === null) {
            fail(
              state,
              connection,
              "protocol",
              `could not list its changed tools (${describe(error)}); its tools were removed.`,
              error,
            );
            return;
          }
          replaceTools(state, loaded, connection, client, tools);
        },
      },
    },
  });
  client.onclose = () => {
    // While connecting, the failed handshake says why; afterwards a close means the server went away.
    if (connection.client === client && connection.state === "connected")
      fail(
        state,
        connection,
        "closed",
        "closed the connection (it exited or was stopped); its tools were removed.",
      );
  };
  client.onerror = (error) => {
    // While connecting, errors end in the failed handshake, which reports them once.
    if (connection.client !== client || connection.state !== "connected") return;
    emit(state, {
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
  return client;
}

/** A server's new tool list replaces its old tools (whose names are free again) and is reported. */
function replaceTools(
  state: McpServersState,
  loaded: McpSdk,
  connection: Connection,
  client: Client,
  tools: McpTool[],
): void {
  const taken = takenNames(state);
  for (const tool of connection.tools) taken.delete(tool.name);
  connection.tools = tools.map((tool) => toTool(state, loaded, connection, client, tool, taken));
  emit(state, {
    type: "mcp-server-tools-changed",
    server: connection.server,
    tools: connection.tools.map((tool) => tool.name),
  });
}

/** Every page of the server's tool list, each request within what is left of the budget. */
async function listTools(
  { McpError, ErrorCode }: McpSdk,
  client: Client,
  remaining: () => number,
): Promise<McpTool[]> {
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
}

/** The transport for a connection's config; a stdio server's stderr tail is kept on the connection. */
async function transportFor(state: McpServersState, connection: Connection): Promise<Transport> {
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
    env: { ...(state.options.env ?? getDefaultEnvironment()), ...config.env },
    cwd: state.options.cwd,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    connection.stderrTail = (connection.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_LENGTH);
  });
  return transport;
}
