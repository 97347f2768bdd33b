import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { McpServerError } from "./mcp-errors.ts";

/** A server's stdin, written by the client (a Node `Writable`, such as a child process's `stdin`, fits). */
export interface McpStdioInput {
  /** Called with one framed message; false when the caller should wait for `drain`. */
  write(chunk: string): boolean;
  /** Called after a `write` returned false: `listener` runs once the buffer has room again. */
  once(event: "drain", listener: () => void): unknown;
}

/** A server's stdout, read by the client (a Node `Readable`, such as a child process's `stdout`, fits). */
export interface McpStdioOutput {
  /** Called once, when the client starts: each chunk of the server's output. */
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  /** Called once, when the client starts: the server closed its stdout. */
  once(event: "close", listener: () => void): unknown;
}

/** Just enough of an MCP client to tell whether a stdio server answers: the handshake and `ping`. */
export interface McpStdioClient {
  /** The `initialize` request and the `notifications/initialized` notification; rejects on error or timeout. */
  initialize(timeoutMs: number): Promise<void>;
  /** One `ping` request; resolves when the server answers, rejects on an error answer or a timeout. */
  ping(timeoutMs: number): Promise<void>;
}

export interface McpStdioClientOptions {
  /** The server's name in the errors this client throws (default "stdio"). */
  server?: string;
}

type StdioFraming = typeof import("@modelcontextprotocol/sdk/shared/stdio.js");

/** The SDK (zod, ajv and a few hundred modules behind it) loads with the first handshake, never at import. */
async function loadSdk(): Promise<{ Client: typeof Client; framing: StdioFraming }> {
  const [client, framing] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/shared/stdio.js"),
  ]);
  return { Client: client.Client, framing };
}

/**
 * The SDK's stdio framing over pipes the caller already holds: a task monitor spawns the server in its own
 * process group (so that stopping the task kills the whole group), which the SDK's own stdio transport cannot do.
 */
function createPipeTransport(
  { ReadBuffer, serializeMessage }: StdioFraming,
  input: McpStdioInput,
  output: McpStdioOutput,
  server: string,
): Transport {
  const buffer = new ReadBuffer();
  let closed = false;
  const transport: Transport = {
    async start() {
      output.on("data", (chunk) => {
        // A Node stream hands out Buffers, which is what the SDK's buffer appends.
        buffer.append(chunk as Parameters<typeof buffer.append>[0]);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = buffer.readMessage();
          } catch (error) {
            // Not protocol output (a stray log line); MCP servers should log to stderr.
            transport.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          transport.onmessage?.(message);
        }
      });
      output.once("close", () => void transport.close());
    },
    async send(message) {
      if (closed) {
        throw new McpServerError(`MCP server ${server} closed its stdout; start it again.`, {
          server,
          kind: "closed",
        });
      }
      if (!input.write(serializeMessage(message)))
        await new Promise<void>((resolve) => input.once("drain", resolve));
    },
    async close() {
      if (closed) return;
      closed = true;
      buffer.clear();
      transport.onclose?.();
    },
  };
  return transport;
}

/**
 * Speaks MCP (newline-delimited JSON-RPC 2.0, through the MCP SDK's client) over the stdin and stdout of a
 * server the caller started: what `createTaskManager({ connectMcp })` of `@unforget/tasks` pings a
 * `monitor_mcp` task's server with.
 */
export function createMcpStdioClient(
  input: McpStdioInput,
  output: McpStdioOutput,
  options: McpStdioClientOptions = {},
): McpStdioClient {
  const server = options.server ?? "stdio";
  let client: Client | undefined;
  return {
    async initialize(timeoutMs) {
      const sdk = await loadSdk();
      client = new sdk.Client({ name: "unforget", version: "1" }, { capabilities: {} });
      await client.connect(createPipeTransport(sdk.framing, input, output, server), { timeout: timeoutMs });
    },
    async ping(timeoutMs) {
      if (client === undefined) {
        throw new McpServerError(
          `MCP server ${server} has not been initialised: call initialize() and wait for it before ping().`,
          { server, kind: "protocol" },
        );
      }
      await client.ping({ timeout: timeoutMs });
    },
  };
}
