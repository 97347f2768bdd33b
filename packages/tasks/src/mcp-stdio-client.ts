import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";

/** The MCP revision the monitor speaks; `ping` and `initialize` have not changed across revisions. */
const PROTOCOL_VERSION = "2025-06-18";

/** Just enough of an MCP client to tell whether a stdio server answers: the handshake and `ping`. */
export interface McpStdioClient {
  /** The `initialize` request and the `notifications/initialized` notification; rejects on error or timeout. */
  initialize(timeoutMs: number): Promise<void>;
  /** One `ping` request; resolves when the server answers, rejects on an error answer or a timeout. */
  ping(timeoutMs: number): Promise<void>;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** Speaks newline-delimited JSON-RPC 2.0 over a server's stdin and stdout, as MCP's stdio transport does. */
export function createMcpStdioClient(input: Writable, output: Readable): McpStdioClient {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let closed: Error | undefined;

  const send = (message: Record<string, unknown>) => {
    input.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  };

  const lines = createInterface({ input: output, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    let message: { id?: number | string; method?: string; result?: unknown; error?: { message?: string } };
    try {
      message = JSON.parse(line);
    } catch {
      return; // Not protocol output (a stray log line); MCP servers should log to stderr.
    }
    if (message.method !== undefined) {
      // A request from the server: answer its pings, decline the rest (this client offers no capabilities).
      if (message.id === undefined) return;
      if (message.method === "ping") send({ id: message.id, result: {} });
      else send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
      return;
    }
    const waiting = typeof message.id === "number" ? pending.get(message.id) : undefined;
    if (waiting === undefined) return;
    pending.delete(message.id as number);
    clearTimeout(waiting.timer);
    if (message.error !== undefined)
      waiting.reject(new Error(`the server answered with an error: ${message.error.message ?? "unknown"}`));
    else waiting.resolve(message.result);
  });
  lines.on("close", () => {
    closed = new Error("the server closed its stdout");
    for (const waiting of pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(closed);
    }
    pending.clear();
  });

  const request = (method: string, params: Record<string, unknown> | undefined, timeoutMs: number) =>
    new Promise<unknown>((resolve, reject) => {
      if (closed !== undefined) {
        reject(closed);
        return;
      }
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      pending.set(id, { resolve, reject, timer });
      send(params === undefined ? { id, method } : { id, method, params });
    });

  return {
    async initialize(timeoutMs) {
      await request(
        "initialize",
        {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "unforget-tasks", version: "1" },
        },
        timeoutMs,
      );
      send({ method: "notifications/initialized" });
    },
    async ping(timeoutMs) {
      await request("ping", undefined, timeoutMs);
    },
  };
}
