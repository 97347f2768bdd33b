export type {
  McpHttpServerConfig,
  McpServerConfig,
  McpStdioServerConfig,
  ParseMcpConfigOptions,
} from "./mcp-config.ts";
export { parseMcpConfig, readMcpConfig } from "./mcp-config.ts";
export type { McpFailureKind } from "./mcp-errors.ts";
export { McpConfigError, McpServerError } from "./mcp-errors.ts";
export type {
  McpServerEvent,
  McpServerState,
  McpServerStatus,
  McpServers,
  McpServersOptions,
} from "./mcp-servers.ts";
export { connectMcpServers } from "./mcp-servers.ts";
export {
  createMcpStdioClient,
  type McpStdioClient,
  type McpStdioClientOptions,
  type McpStdioInput,
  type McpStdioOutput,
} from "./mcp-stdio-client.ts";
export { MAX_TOOL_NAME_LENGTH, mcpToolName, mcpToolPrefix } from "./mcp-tool-name.ts";
export type { McpCallResult } from "./mcp-tool-output.ts";
export { mcpResultToToolOutput } from "./mcp-tool-output.ts";
