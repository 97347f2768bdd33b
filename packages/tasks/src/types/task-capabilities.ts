import type { Readable, Writable } from "node:stream";

/** Just enough of an MCP client to tell whether a stdio server answers: the handshake and `ping`. */
export interface McpMonitorClient {
  /** Called once per server start: the `initialize` handshake; rejects on an error answer or after `timeoutMs`. */
  initialize(timeoutMs: number): Promise<void>;
  /** Called at every health check after the handshake: one `ping`; rejects on an error answer or after `timeoutMs`. */
  ping(timeoutMs: number): Promise<void>;
}

/**
 * Opens an MCP client over the stdin and stdout of a server a `monitor_mcp` task started: `createMcpStdioClient`
 * of `@unforget/mcp` is one.
 */
export type ConnectMcp = (input: Writable, output: Readable) => McpMonitorClient;

/**
 * What the application gave the manager that a task type may need and the package does not carry; a type
 * whose spec needs a capability that is absent refuses it in `validate`, naming the package that provides it.
 */
export interface TaskCapabilities {
  /** The MCP client a `monitor_mcp` task with a `command` pings its server through (`createTaskManager({ connectMcp })`). */
  readonly connectMcp?: ConnectMcp;
}
