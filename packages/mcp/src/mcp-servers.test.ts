import { mkdtemp, readFile, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server as HttpServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Tool, ToolContext } from "@unforget/core";
import { afterEach, describe, expect, it } from "vitest";
import { createTestServer } from "./__fixtures__/test-server.mjs";
import type { McpServerConfig } from "./mcp-config.ts";
import { connectMcpServers, type McpServerEvent, type McpServers } from "./mcp-servers.ts";

const SERVER = fileURLToPath(new URL("./__fixtures__/test-server.mjs", import.meta.url));
const stdio = (mode = "serve"): McpServerConfig => ({
  type: "stdio",
  command: process.execPath,
  args: [SERVER, mode],
  env: {},
});

function context(signal = new AbortController().signal): ToolContext {
  return { signal, sessionId: "s", toolUseId: "t", cwd: process.cwd(), sessionState: new Map() };
}

function find(servers: McpServers, name: string): Tool {
  const tool = servers.tools().find((candidate) => candidate.name === name);
  if (tool === undefined)
    throw new Error(
      `no tool ${name} in ${servers
        .tools()
        .map((t) => t.name)
        .join(", ")}`,
    );
  return tool;
}

/** Resolves with the first event that `matches`. */
function waitFor(
  events: McpServerEvent[],
  matches: (event: McpServerEvent) => boolean,
): Promise<McpServerEvent> {
  return new Promise((resolve) => {
    const poll = () => {
      const found = events.find(matches);
      if (found !== undefined) resolve(found);
      else setTimeout(poll, 10);
    };
    poll();
  });
}

const open: McpServers[] = [];
function connect(
  servers: Record<string, McpServerConfig>,
  extra: { connectTimeoutMs?: number; callTimeoutMs?: number; cwd?: string } = {},
) {
  const events: McpServerEvent[] = [];
  const connection = connectMcpServers({ servers, onEvent: (event) => events.push(event), ...extra });
  open.push(connection);
  return { servers: connection, events };
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((servers) => servers.close()));
});

describe("a stdio server written with the SDK", () => {
  it("lists its tools as mcp__<server>__<tool> with schemas, annotations and instructions", async () => {
    const { servers, events } = connect({ test: stdio() });
    const [status] = await servers.ready();
    expect(status).toMatchObject({
      server: "test",
      transport: "stdio",
      state: "connected",
      instructions: "Use echo to test.",
    });
    expect(status?.tools).toContain("mcp__test__echo");
    expect(status?.tools).toContain("mcp__test__tool_with_spaces_and_dots");
    const echo = find(servers, "mcp__test__echo");
    expect(echo).toMatchObject({
      description: "Says the text back.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      readOnly: true,
      concurrencySafe: true,
      // Read-only and idempotent or not, an MCP tool's old results are saved before compaction clears them.
      resultRetention: "persist",
    });
    expect(find(servers, "mcp__test__crash")).toMatchObject({
      readOnly: false,
      concurrencySafe: false,
      resultRetention: "persist",
    });
    expect(events[0]).toMatchObject({ type: "mcp-server-connected", server: "test" });
  });

  it("maps text, images, structured content and errors", async () => {
    const { servers } = connect({ test: stdio() });
    await servers.ready();
    expect(await find(servers, "mcp__test__echo").execute({ text: "hi" }, context())).toEqual({
      content: "echo: hi",
      isError: false,
    });
    const picture = await find(servers, "mcp__test__picture").execute({}, context());
    expect(picture.content).toEqual([
      { type: "text", text: "a red pixel" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: expect.any(String) } },
    ]);
    expect(await find(servers, "mcp__test__measure").execute({}, context())).toEqual({
      content: '{"size":42}',
      isError: false,
    });
    expect(await find(servers, "mcp__test__refuse").execute({}, context())).toEqual({
      content: "no, never",
      isError: true,
    });
    expect(await find(servers, "mcp__test__tool_with_spaces_and_dots").execute({}, context())).toEqual({
      content: "called tool with spaces/and.dots",
      isError: false,
    });
  });

  it("cancels a call on abort, and the server stays", async () => {
    const { servers } = connect({ test: stdio() });
    await servers.ready();
    const controller = new AbortController();
    const call = find(servers, "mcp__test__slow").execute({ ms: 60_000 }, context(controller.signal));
    controller.abort();
    expect(await call).toEqual({ content: "The call to mcp__test__slow was interrupted.", isError: true });
    expect(await find(servers, "mcp__test__echo").execute({ text: "still here" }, context())).toEqual({
      content: "echo: still here",
      isError: false,
    });
  });

  it("cancels a call past its timeout and tells the model; the server stays", async () => {
    // Only the slow call can reach the short timeout: it never answers before it.
    const { servers } = connect({ test: stdio() }, { callTimeoutMs: 300 });
    await servers.ready();
    const late = await find(servers, "mcp__test__slow").execute({ ms: 60_000 }, context());
    expect(late).toMatchObject({
      isError: true,
      content: expect.stringContaining("did not answer within 300 ms"),
    });
    expect(servers.status()[0]?.state).toBe("connected");
    expect(find(servers, "mcp__test__slow").timeoutMs).toBe(300);
  });

  it("a server that dies mid-call is reported and its tools removed; the others go on", async () => {
    const { servers, events } = connect({ doomed: stdio(), healthy: stdio() });
    await servers.ready();
    const echo = find(servers, "mcp__doomed__echo");
    const result = await find(servers, "mcp__doomed__crash").execute({}, context());
    expect(result).toMatchObject({ isError: true, content: expect.stringContaining('"doomed" went away') });
    const failed = await waitFor(events, (event) => event.type === "mcp-server-failed");
    expect(failed).toMatchObject({ server: "doomed", error: { kind: "closed", code: "mcp_server" } });
    expect(servers.tools().some((tool) => tool.name.startsWith("mcp__doomed__"))).toBe(false);
    expect(servers.status().map((status) => status.state)).toEqual(["failed", "connected"]);
    expect(await echo.execute({ text: "x" }, context())).toMatchObject({
      isError: true,
      content: expect.stringContaining("is no longer available"),
    });
    expect(await find(servers, "mcp__healthy__echo").execute({ text: "ok" }, context())).toEqual({
      content: "echo: ok",
      isError: false,
    });
  });

  it("a server that answers garbage is reported and removed", async () => {
    const { servers, events } = connect({ test: stdio() });
    await servers.ready();
    const result = await find(servers, "mcp__test__garbage").execute({}, context());
    expect(result).toMatchObject({ isError: true, content: expect.stringContaining("not a tool result") });
    expect(events.find((event) => event.type === "mcp-server-failed")).toMatchObject({
      error: { kind: "protocol" },
    });
    expect(servers.tools()).toEqual([]);
  });

  it("a stray line on stdout is a warning; the server stays", async () => {
    const { servers, events } = connect({ test: stdio() });
    await servers.ready();
    expect(await find(servers, "mcp__test__chatter").execute({}, context())).toEqual({
      content: "done",
      isError: false,
    });
    expect(events.find((event) => event.type === "mcp-server-warning")).toMatchObject({
      server: "test",
      error: { kind: "protocol" },
    });
    expect(servers.status()[0]?.state).toBe("connected");
  });

  it("follows the server's tool list when it changes", async () => {
    const { servers, events } = connect({ test: stdio() });
    await servers.ready();
    await find(servers, "mcp__test__grow").execute({}, context());
    await waitFor(events, (event) => event.type === "mcp-server-tools-changed");
    expect(await find(servers, "mcp__test__grown").execute({}, context())).toEqual({
      content: "called grown",
      isError: false,
    });
  });

  it("a server that fails to start is reported with its stderr; the session goes on", async () => {
    const { servers, events } = connect({
      broken: stdio("exit-at-start"),
      missing: { type: "stdio", command: "/nonexistent/mcp-server", args: [], env: {} },
      ok: stdio(),
    });
    const statuses = await servers.ready();
    expect(statuses.map((status) => status.state)).toEqual(["failed", "failed", "connected"]);
    expect(statuses[0]?.error?.message).toContain("fatal: missing API token");
    // The one-line report and the stderr apart, for a screen that has one line for it.
    expect(statuses[0]?.error?.summary).toMatch(/^The MCP server "broken" [^\n]+\.$/);
    expect(statuses[0]?.error?.summary).not.toContain("fatal");
    expect(statuses[0]?.error?.stderr).toContain("fatal: missing API token");
    expect(statuses[1]?.error).toMatchObject({
      kind: "start",
      message:
        'The MCP server "missing" could not be started: its command "/nonexistent/mcp-server" was not found (install it, or correct "command" in the config).',
    });
    expect(
      events
        .filter((event) => event.type === "mcp-server-failed")
        .map((event) => event.server)
        .sort(),
    ).toEqual(["broken", "missing"]);
    expect(servers.tools().every((tool) => tool.name.startsWith("mcp__ok__"))).toBe(true);
  });

  it("reconnects a server once what made it fail is fixed; a connected one restarts; an unknown name is an error", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-mcp-reconnect-"));
    const script = join(dir, "server.mjs");
    const { servers, events } = connect({
      later: { type: "stdio", command: process.execPath, args: [script, "serve"], env: {} },
    });
    const [first] = await servers.ready();
    expect(first).toMatchObject({ state: "failed", tools: [] });
    // The user fixes it (here: the script appears), then asks for a reconnect.
    await symlink(SERVER, script);
    const second = await servers.reconnect("later");
    expect(second).toMatchObject({ server: "later", state: "connected" });
    expect(second.error).toBeUndefined();
    expect(servers.status()[0]).toMatchObject({ state: "connected" });
    expect(await find(servers, "mcp__later__echo").execute({ text: "back" }, context())).toEqual({
      content: "echo: back",
      isError: false,
    });
    const failures = events.filter((event) => event.type === "mcp-server-failed").length;
    const third = await servers.reconnect("later");
    expect(third).toMatchObject({ state: "connected" });
    // The old connection's close is not a failure of the new one.
    expect(events.filter((event) => event.type === "mcp-server-failed")).toHaveLength(failures);
    expect(servers.tools().map((tool) => tool.name)).toContain("mcp__later__echo");
    await expect(servers.reconnect("nope")).rejects.toMatchObject({ kind: "unknown" });
    await servers.close();
    await expect(servers.reconnect("later")).rejects.toMatchObject({ kind: "unknown" });
  });

  it("a server that never answers the handshake is dropped after the connect timeout", async () => {
    const { servers } = connect({ mute: stdio("hang") }, { connectTimeoutMs: 500 });
    const [status] = await servers.ready();
    expect(status).toMatchObject({ state: "failed", error: { kind: "timeout" } });
    expect(status?.error?.message).toContain("within 500 ms");
  });

  it("closed before the SDK has loaded, starts no server", async () => {
    const { servers, events } = connect({ test: stdio() });
    // The SDK loads on the first connection; closing right away must leave nothing connected or running.
    await servers.close();
    const [status] = await servers.ready();
    expect(status).toMatchObject({ state: "closed", tools: [] });
    expect(servers.tools()).toEqual([]);
    expect(events).toEqual([]);
  });

  it("starts stdio servers with only the environment it is given", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcp-env-"));
    const script = join(dir, "env-server.mjs");
    await writeFile(
      script,
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(join(dir, "env.json"))}, JSON.stringify(process.env));\nprocess.exit(0);\n`,
    );
    process.env.UNFORGET_MCP_TEST_SECRET = "leak";
    try {
      const { servers } = connect(
        { e: { type: "stdio", command: process.execPath, args: [script], env: { GIVEN: "yes" } } },
        { cwd: dir },
      );
      await servers.ready();
    } finally {
      delete process.env.UNFORGET_MCP_TEST_SECRET;
    }
    const seen = JSON.parse(await readFile(join(dir, "env.json"), "utf8")) as Record<string, string>;
    expect(seen.GIVEN).toBe("yes");
    expect(seen.UNFORGET_MCP_TEST_SECRET).toBeUndefined();
    expect(seen.PATH).toBe(process.env.PATH);
  });
});

describe("a streamable HTTP server started in-process", () => {
  let http: HttpServer | undefined;
  const headersSeen: (string | undefined)[] = [];

  async function startHttp(): Promise<string> {
    http = createServer(async (request, response) => {
      headersSeen.push(request.headers.authorization);
      const server = createTestServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      response.on("close", () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(request, response);
    });
    await new Promise<void>((resolve) => http?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  }

  afterEach(async () => {
    http?.closeAllConnections();
    await new Promise((resolve) => http?.close(resolve));
  });

  it("connects with the headers, calls tools, and drops the server when it goes away", async () => {
    const url = await startHttp();
    const { servers, events } = connect({
      remote: { type: "http", url, headers: { Authorization: "Bearer t0ken" } },
    });
    const [status] = await servers.ready();
    expect(status).toMatchObject({ transport: "http", state: "connected" });
    expect(headersSeen).toContain("Bearer t0ken");
    expect(await find(servers, "mcp__remote__echo").execute({ text: "over http" }, context())).toEqual({
      content: "echo: over http",
      isError: false,
    });
    http?.closeAllConnections();
    await new Promise((resolve) => http?.close(resolve));
    const result = await find(servers, "mcp__remote__echo").execute({ text: "anyone?" }, context());
    expect(result.isError).toBe(true);
    expect(events.find((event) => event.type === "mcp-server-failed")).toMatchObject({
      server: "remote",
      error: { kind: "closed" },
    });
    expect(servers.tools()).toEqual([]);
  });

  it("a url where nothing listens fails to start", async () => {
    const url = await startHttp();
    http?.closeAllConnections();
    await new Promise((resolve) => http?.close(resolve));
    const { servers } = connect({ gone: { type: "http", url, headers: {} } }, { connectTimeoutMs: 5_000 });
    const [status] = await servers.ready();
    expect(status).toMatchObject({ state: "failed", error: { kind: "start" } });
  });
});

describe("a published server: @modelcontextprotocol/server-filesystem", () => {
  it("reads and writes files in its root through its tools", async () => {
    const root = await mkdtemp(join(tmpdir(), "mcp-fs-"));
    await writeFile(join(root, "notes.txt"), "remember the milk\n");
    const entry = join(
      createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/package.json"),
      "..",
      "dist",
      "index.js",
    );
    const { servers } = connect({
      fs: { type: "stdio", command: process.execPath, args: [entry, root], env: {} },
    });
    const [status] = await servers.ready();
    expect(status?.state).toBe("connected");
    const read = find(servers, "mcp__fs__read_text_file");
    expect(read.readOnly).toBe(true);
    expect(find(servers, "mcp__fs__write_file").readOnly).toBe(false);
    expect(await read.execute({ path: join(root, "notes.txt") }, context())).toMatchObject({
      content: expect.stringContaining("remember the milk"),
      isError: false,
    });
    await find(servers, "mcp__fs__write_file").execute(
      { path: join(root, "new.txt"), content: "written" },
      context(),
    );
    expect(await readFile(join(root, "new.txt"), "utf8")).toBe("written");
    const outside = await read.execute({ path: "/etc/hostname" }, context());
    expect(outside.isError).toBe(true);
  });
});
