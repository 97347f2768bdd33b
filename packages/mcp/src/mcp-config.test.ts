// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal text ${VAR} is what is parsed here.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseMcpConfig, readMcpConfig } from "./mcp-config.ts";
import { McpConfigError } from "./mcp-errors.ts";

const env = { TOKEN: "secret", HOST: "mcp.example.com", EMPTY: "" };

describe("parseMcpConfig", () => {
  it.each([
    [
      "stdio with command, args and env",
      { srv: { command: "node", args: ["server.js", "--port", "1"], env: { A: "b" } } },
      { srv: { type: "stdio", command: "node", args: ["server.js", "--port", "1"], env: { A: "b" } } },
    ],
    [
      "stdio with an explicit type",
      { s: { type: "stdio", command: "x" } },
      { s: { type: "stdio", command: "x", args: [], env: {} } },
    ],
    [
      "http with url and headers",
      { h: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } } },
      { h: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } } },
    ],
    [
      "a url without a type is http",
      { h: { url: "http://localhost:1/mcp" } },
      { h: { type: "http", url: "http://localhost:1/mcp", headers: {} } },
    ],
    [
      "${VAR} in command, args, env, url and headers",
      {
        s: { command: "${HOST}-bin", args: ["--token=${TOKEN}"], env: { KEY: "${TOKEN}" } },
        h: { type: "http", url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
      },
      {
        s: {
          type: "stdio",
          command: "mcp.example.com-bin",
          args: ["--token=secret"],
          env: { KEY: "secret" },
        },
        h: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer secret" } },
      },
    ],
    [
      "${VAR:-default} when unset or empty, the value when set",
      {
        s: { command: "x", args: ["${MISSING:-fallback}", "${EMPTY:-also}", "${TOKEN:-unused}", "${EMPTY}"] },
      },
      { s: { type: "stdio", command: "x", args: ["fallback", "also", "secret", ""], env: {} } },
    ],
    [
      "$VAR without braces stays as it is",
      { s: { command: "echo", args: ["$TOKEN"] } },
      { s: { type: "stdio", command: "echo", args: ["$TOKEN"], env: {} } },
    ],
  ])("%s", (_name, servers, expected) => {
    expect(parseMcpConfig({ mcpServers: servers }, { env })).toEqual(expected);
  });

  it.each([
    ["no mcpServers", {}, "mcpServers"],
    ["mcpServers is a list", { mcpServers: [] }, "mcpServers"],
    ["a server that is a string", { mcpServers: { s: "node" } }, "mcpServers.s"],
    ["stdio without a command", { mcpServers: { s: { args: [] } } }, "mcpServers.s.command"],
    ["args that are not strings", { mcpServers: { s: { command: "x", args: [1] } } }, "mcpServers.s.args"],
    ["env with a number", { mcpServers: { s: { command: "x", env: { PORT: 1 } } } }, "mcpServers.s.env.PORT"],
    ["http without a url", { mcpServers: { h: { type: "http" } } }, "mcpServers.h.url"],
    ["a url that is not one", { mcpServers: { h: { type: "http", url: "not a url" } } }, "mcpServers.h.url"],
    ["a file: url", { mcpServers: { h: { type: "http", url: "file:///etc/passwd" } } }, "mcpServers.h.url"],
    [
      "headers that are a list",
      { mcpServers: { h: { type: "http", url: "http://a/", headers: ["x"] } } },
      "mcpServers.h.headers",
    ],
    ["the sse transport", { mcpServers: { h: { type: "sse", url: "http://a/sse" } } }, "mcpServers.h.type"],
    ["an unknown type", { mcpServers: { h: { type: "websocket", url: "ws://a/" } } }, "mcpServers.h.type"],
    [
      "an unset variable without default",
      { mcpServers: { h: { type: "http", url: "http://a/", headers: { Authorization: "Bearer ${NOPE}" } } } },
      "mcpServers.h.headers.Authorization",
    ],
    [
      "an unset variable in args",
      { mcpServers: { s: { command: "x", args: ["ok", "${NOPE}"] } } },
      "mcpServers.s.args[1]",
    ],
  ])("rejects %s, naming the file and key", (_name, json, key) => {
    let caught: unknown;
    try {
      parseMcpConfig(json, { env, file: "/project/.mcp.json" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(McpConfigError);
    expect((caught as McpConfigError).key).toBe(key);
    expect((caught as McpConfigError).code).toBe("mcp_config");
    expect((caught as Error).message).toContain(`${key} in /project/.mcp.json`);
  });

  it("says which variable to set", () => {
    expect(() => parseMcpConfig({ mcpServers: { s: { command: "${NOPE}" } } }, { env })).toThrow(
      /uses \$\{NOPE\}, which is not set: set NOPE in the environment, or write \$\{NOPE:-default\}/,
    );
  });
});

describe("readMcpConfig", () => {
  it("reads a file, and a missing file has no servers", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcp-config-"));
    await writeFile(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { s: { command: "node" } } }));
    expect(await readMcpConfig(join(dir, ".mcp.json"))).toEqual({
      s: { type: "stdio", command: "node", args: [], env: {} },
    });
    expect(await readMcpConfig(join(dir, "missing.json"))).toEqual({});
  });

  it("names the file that is not JSON", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcp-config-"));
    await writeFile(join(dir, ".mcp.json"), "{ mcpServers: ");
    await expect(readMcpConfig(join(dir, ".mcp.json"))).rejects.toThrow(
      `${join(dir, ".mcp.json")} is not valid JSON`,
    );
  });
});
