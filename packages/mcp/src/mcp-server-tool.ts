import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { Tool, ToolOutput } from "@unforget/core";
import {
  type Connection,
  describe,
  fail,
  isShapeError,
  type McpSdk,
  type McpServersState,
} from "./mcp-server-state.ts";
import { mcpToolName } from "./mcp-tool-name.ts";
import { type McpCallResult, mcpResultToToolOutput } from "./mcp-tool-output.ts";

/** Claude Code cuts longer tool descriptions; some servers put whole manuals there. */
const MAX_DESCRIPTION_LENGTH = 2048;

function errorOutput(text: string): ToolOutput {
  return { content: text, isError: true };
}

/**
 * Turns one tool a server listed into a core `Tool` named `mcp__<server>__<tool>` (a name not yet in `taken`,
 * which it then joins). Its calls go to `client` while that is still the server's client.
 */
export function toTool(
  state: McpServersState,
  sdk: McpSdk,
  connection: Connection,
  client: Client,
  definition: McpTool,
  taken: Set<string>,
): Tool {
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
    timeoutMs: state.callTimeoutMs,
    async execute(input, context) {
      if (connection.client !== client)
        return errorOutput(
          `The MCP server "${connection.server}" is no longer available${connection.error ? ` (${connection.error.message})` : ""}; its tools were removed. Do not call them again.`,
        );
      try {
        const result = (await client.callTool({ name: definition.name, arguments: input }, undefined, {
          signal: context.signal,
          timeout: state.callTimeoutMs,
        })) as McpCallResult;
        return mcpResultToToolOutput(result);
      } catch (error) {
        if (context.signal.aborted) return errorOutput(`The call to ${name} was interrupted.`);
        return callFailureOutput(state, sdk, connection, name, definition.name, error);
      }
    },
  };
}

/** What the model is told when a call failed; a server that broke the protocol or went away is dropped. */
function callFailureOutput(
  state: McpServersState,
  { McpError, ErrorCode }: McpSdk,
  connection: Connection,
  name: string,
  serverToolName: string,
  error: unknown,
): ToolOutput {
  if (isShapeError(error)) {
    fail(
      state,
      connection,
      "protocol",
      `answered a call to ${serverToolName} with something that is not an MCP result (${describe(error)}); its tools were removed.`,
      error,
    );
    return errorOutput(
      `The MCP server "${connection.server}" answered with something that is not a tool result; it was disconnected and its tools removed.`,
    );
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
    return errorOutput(
      `${name} did not answer within ${state.callTimeoutMs} ms; the call was cancelled. Try again with a smaller request, or do without it.`,
    );
  if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed)
    return errorOutput(`${name} failed: ${error.message}`);
  fail(
    state,
    connection,
    "closed",
    `went away during a call to ${serverToolName} (${describe(error)}); its tools were removed.`,
    error,
  );
  return errorOutput(
    `The MCP server "${connection.server}" went away during the call; its tools were removed.`,
  );
}
