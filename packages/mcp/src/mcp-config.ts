import { readFile } from "node:fs/promises";
import { McpConfigError } from "./mcp-errors.ts";

/** A server started as a child process that speaks MCP over its stdin and stdout. */
export interface McpStdioServerConfig {
  type: "stdio";
  command: string;
  args: string[];
  /** Added to the base environment the server starts with (see `McpServersOptions.env`). */
  env: Record<string, string>;
}

/** A server reached over MCP's streamable HTTP transport. */
export interface McpHttpServerConfig {
  type: "http";
  url: string;
  /** Sent with every request (e.g. `Authorization`). */
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export interface ParseMcpConfigOptions {
  /** Named in error messages. */
  file?: string;
  /** Where `${VAR}` and `${VAR:-default}` are looked up; default `process.env`. */
  env?: Record<string, string | undefined>;
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function where(file: string | undefined, key: string): string {
  return file === undefined ? key : `${key} in ${file}`;
}

/**
 * Expands `${VAR}` and `${VAR:-default}` as Claude Code does in `command`, `args`, `env`, `url` and `headers`.
 * A variable that is unset and has no default is an error (Claude Code refuses such a config too), so that a
 * missing secret is never sent as the literal text `${TOKEN}`.
 */
function expand(text: string, key: string, options: ParseMcpConfigOptions): string {
  const env = options.env ?? process.env;
  return text.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (fallback !== undefined) return value === undefined || value === "" ? fallback : value;
    if (value !== undefined) return value;
    throw new McpConfigError(
      `${where(options.file, key)} uses \${${name}}, which is not set: set ${name} in the environment, or write \${${name}:-default}.`,
      { file: options.file, key },
    );
  });
}

function expectString(value: unknown, key: string, options: ParseMcpConfigOptions): string {
  if (typeof value !== "string" || value === "")
    throw new McpConfigError(`${where(options.file, key)} must be a non-empty string.`, {
      file: options.file,
      key,
    });
  return expand(value, key, options);
}

function stringMap(value: unknown, key: string, options: ParseMcpConfigOptions): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value))
    throw new McpConfigError(`${where(options.file, key)} must be an object of strings.`, {
      file: options.file,
      key,
    });
  const result: Record<string, string> = {};
  for (const [name, entry] of Object.entries(value)) {
    const entryKey = `${key}.${name}`;
    if (typeof entry !== "string")
      throw new McpConfigError(`${where(options.file, entryKey)} must be a string.`, {
        file: options.file,
        key: entryKey,
      });
    result[name] = expand(entry, entryKey, options);
  }
  return result;
}

function parseServer(value: unknown, key: string, options: ParseMcpConfigOptions): McpServerConfig {
  if (!isRecord(value))
    throw new McpConfigError(`${where(options.file, key)} must be an object.`, { file: options.file, key });
  const type = value.type ?? (value.url !== undefined && value.command === undefined ? "http" : "stdio");
  if (type === "stdio") {
    const args = value.args ?? [];
    if (!Array.isArray(args) || args.some((arg) => typeof arg !== "string"))
      throw new McpConfigError(`${where(options.file, `${key}.args`)} must be an array of strings.`, {
        file: options.file,
        key: `${key}.args`,
      });
    return {
      type,
      command: expectString(value.command, `${key}.command`, options),
      args: (args as string[]).map((arg, index) => expand(arg, `${key}.args[${index}]`, options)),
      env: stringMap(value.env, `${key}.env`, options),
    };
  }
  if (type === "http") {
    const url = expectString(value.url, `${key}.url`, options);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (error) {
      throw new McpConfigError(`${where(options.file, `${key}.url`)} is not a URL: "${url}".`, {
        file: options.file,
        key: `${key}.url`,
        cause: error,
      });
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new McpConfigError(`${where(options.file, `${key}.url`)} must be an http:// or https:// URL.`, {
        file: options.file,
        key: `${key}.url`,
      });
    return { type, url, headers: stringMap(value.headers, `${key}.headers`, options) };
  }
  const hint =
    type === "sse"
      ? 'the deprecated SSE transport is not supported: use "type": "http" (streamable HTTP), which servers that spoke SSE now serve'
      : 'use "stdio" (with "command") or "http" (with "url")';
  throw new McpConfigError(`${where(options.file, `${key}.type`)} is "${String(type)}": ${hint}.`, {
    file: options.file,
    key: `${key}.type`,
  });
}

/**
 * Reads the servers of a parsed `.mcp.json` (Claude Code's format: `{ "mcpServers": { "<name>": … } }`).
 * Throws `McpConfigError` naming the file and key of the first bad value.
 */
export function parseMcpConfig(
  json: unknown,
  options: ParseMcpConfigOptions = {},
): Record<string, McpServerConfig> {
  if (!isRecord(json) || !isRecord(json.mcpServers))
    throw new McpConfigError(`${where(options.file, "mcpServers")} must be an object of servers by name.`, {
      file: options.file,
      key: "mcpServers",
    });
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(json.mcpServers)) {
    servers[name] = parseServer(server, `mcpServers.${name}`, options);
  }
  return servers;
}

/** Reads and parses an `.mcp.json` file; a missing file has no servers. */
export async function readMcpConfig(
  file: string,
  options: Omit<ParseMcpConfigOptions, "file"> = {},
): Promise<Record<string, McpServerConfig>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new McpConfigError(`${file} could not be read (${(error as Error).message}).`, {
      file,
      key: "",
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`${file} is not valid JSON (${(error as Error).message}): fix the file.`, {
      file,
      key: "",
      cause: error,
    });
  }
  return parseMcpConfig(json, { ...options, file });
}
