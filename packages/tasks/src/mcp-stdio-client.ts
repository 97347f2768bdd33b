import type { Readable, Writable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Just enough of an MCP client to tell whether a stdio server answers: the handshake and `ping`. */
export interface McpStdioClient {
  /** The `initialize` request and the `notifications/initialized` notification; rejects on error or timeout. */
  initialize(timeoutMs: number): Promise<void>;
  /** One `ping` request; resolves when the server answers, rejects on an error answer or a timeout. */
  ping(timeoutMs: number): Promise<void>;
}

/**
 * The SDK's stdio framing over pipes the monitor already holds: the monitor spawns the server in its own process
 * group (so that stopping the task kills the whole group), which the SDK's own stdio transport cannot do.
 */
function createPipeTransport(input: Writable, output: Readable): Transport {
  const buffer = new ReadBuffer();
  let closed = false;
  const transport: Transport = {
    async start() {
      output.on("data", (chunk: Buffer) => {
        buffer.append(chunk);
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
      if (closed) throw new Error("the server closed its stdout");
      if (!input.write(serializeMessage(message)))
        await new Promise((resolve) => input.once("drain", resolve));
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

/** Speaks MCP (newline-delimited JSON-RPC 2.0, through the MCP SDK's client) over a server's stdin and stdout. */
export function createMcpStdioClient(input: Writable, output: Readable): McpStdioClient {
  const client = new Client({ name: "unforget-tasks", version: "1" }, { capabilities: {} });
  return {
    async initialize(timeoutMs) {
      await client.connect(createPipeTransport(input, output), { timeout: timeoutMs });
    },
    async ping(timeoutMs) {
      await client.ping({ timeout: timeoutMs });
    },
  };
}
