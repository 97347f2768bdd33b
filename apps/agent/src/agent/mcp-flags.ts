import { resolve } from "node:path";
import type { McpServerConfig } from "@unforget/mcp";
import type { ConnectMcp } from "@unforget/tasks";
import { SettingsError } from "./agent-errors.ts";
import { describeJsonError, mcpFileError } from "./json-text.ts";

/** The servers of one `--mcp-config` value: inline JSON, or a file; MCP's code is loaded only then. */
export async function readMcpFlag(
  value: string,
  env: Record<string, string | undefined>,
): Promise<Record<string, McpServerConfig>> {
  if (value.trimStart().startsWith("{")) {
    const { parseMcpConfig } = await import("@unforget/mcp");
    let json: unknown;
    try {
      json = JSON.parse(value);
    } catch {
      throw new SettingsError(`--mcp-config is not valid JSON, ${await describeJsonError(value)}.`, {
        file: "--mcp-config",
        key: "",
      });
    }
    try {
      return parseMcpConfig(json, { file: "--mcp-config", env });
    } catch (error) {
      throw new SettingsError(`--mcp-config: ${(error as Error).message}`, { file: "--mcp-config", key: "" });
    }
  }
  const file = resolve(value);
  const { readMcpConfig } = await import("@unforget/mcp");
  const servers = await readMcpConfig(file, { env }).catch(async (error: unknown) => {
    throw await mcpFileError(file, error);
  });
  if (Object.keys(servers).length === 0)
    throw new SettingsError(`--mcp-config ${value}: the file does not exist or lists no servers.`, {
      file,
      key: "mcpServers",
    });
  return servers;
}

/**
 * `createMcpStdioClient` of `@unforget/mcp` for the task manager's `monitor_mcp` tasks, loaded when such a task
 * first opens its client (start-up stays without MCP's code). The client speaks first (`initialize`), so nothing
 * the server writes is missed while it loads.
 */
export const connectMcpOnUse: ConnectMcp = (input, output) => {
  const client = import("@unforget/mcp").then(({ createMcpStdioClient }) =>
    createMcpStdioClient(input, output),
  );
  client.catch(() => undefined);
  return {
    initialize: async (timeoutMs) => (await client).initialize(timeoutMs),
    ping: async (timeoutMs) => (await client).ping(timeoutMs),
  };
};
