import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { anthropicSuite, collect, modelCalls, toolNames } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "../loop/agent-session.ts";
import { SessionNotFoundError } from "../loop/session-errors.ts";

/** The MCP package's test server, written with the MCP SDK, spawned over stdio. */
const SERVER = fileURLToPath(new URL("../../../mcp/src/__fixtures__/test-server.mjs", import.meta.url));

const suite = anthropicSuite("mcp");

/** The test server's processes this test process started (their command lines). */
const serverProcesses = () =>
  execFileSync("ps", ["--ppid", String(process.pid), "-o", "args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("test-server.mjs"));

/**
 * A session with one MCP server that answers MCP's handshake only once the test writes the file `go`: it is
 * connecting until then.
 */
async function withHeldServer(options: { waitForMcpServers?: boolean }) {
  const go = join(suite.dir.path, "go");
  const session = await createAgentSession({
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    sessionsDir: suite.dir.path,
    mcpServers: {
      tester: { type: "stdio", command: process.execPath, args: [SERVER, "wait-for", go], env: {} },
    },
    ...options,
    permissions: { mode: "bypassPermissions" },
  });
  return { go, session };
}

describe("MCP servers", () => {
  it("their tools join the session; a server that dies is reported, its tools removed, and the session goes on", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      sessionsDir: suite.dir.path,
      mcpServers: { tester: { type: "stdio", command: process.execPath, args: [SERVER], env: {} } },
      permissions: { mode: "bypassPermissions" },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "e", name: "mcp__tester__echo", input: { text: "over MCP" } }] },
      { kind: "reply", toolCalls: [{ id: "c", name: "mcp__tester__crash", input: {} }] },
      { kind: "reply", text: "The server is gone; I will do without it." },
    );
    const events = await collect(session.send("Use the server."));
    const calls = modelCalls(suite.fake);
    const offered = toolNames(calls[0]);
    expect(offered).toContain("mcp__tester__echo");
    expect(JSON.stringify(calls[1]?.messages)).toContain("over MCP");
    expect(events.find((event) => event.type === "tool-end" && event.toolUseId === "c")).toMatchObject({
      output: { isError: true },
    });
    expect(events.some((event) => event.type === "mcp" && event.event.type === "mcp-server-failed")).toBe(
      true,
    );
    expect(calls[2]?.tools).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "turn-end", stopReason: "end_turn" });
    expect(session.mcpServers?.status().map((server) => server.state)).toEqual(["failed"]);
    await session.close();
  });

  it("with waitForMcpServers false, the first request goes out while a server connects, and its tools join the first request after it has", async () => {
    const { go, session } = await withHeldServer({ waitForMcpServers: false });
    suite.fake.enqueue({ kind: "reply", text: "First answer." }, { kind: "reply", text: "Second answer." });
    await collect(session.send("Hello."));
    expect(session.mcpServers?.status().map((server) => server.state)).toEqual(["connecting"]);
    expect(toolNames(modelCalls(suite.fake)[0])).not.toContain("mcp__tester__echo");
    await writeFile(go, "");
    while (session.mcpServers?.status()[0]?.state === "connecting") await sleep(20);
    await collect(session.send("And now?"));
    expect(toolNames(modelCalls(suite.fake)[1])).toContain("mcp__tester__echo");
    await session.close();
  });

  it("with waitForMcpServers false, nothing starts before the first request: the servers start while it is under way", async () => {
    const { go, session } = await withHeldServer({ waitForMcpServers: false });
    // Opened: no server process yet, the MCP SDK not loaded for it; each server says it is connecting.
    expect(serverProcesses()).toEqual([]);
    expect(session.mcpServers?.status()).toEqual([
      { server: "tester", transport: "stdio", state: "connecting", tools: [] },
    ]);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    suite.fake.enqueue({ kind: "reply", text: "First answer.", holdUntil: held });
    const turn = collect(session.send("Hello."));
    while (modelCalls(suite.fake).length === 0) await sleep(10);
    // The request has reached the model and its answer is held: the server starts meanwhile.
    while (serverProcesses().length === 0) await sleep(20);
    release();
    await turn;
    await writeFile(go, "");
    while (session.mcpServers?.status()[0]?.state === "connecting") await sleep(20);
    expect(session.mcpServers?.status()[0]?.state).toBe("connected");
    await session.close();
  });

  it("with waitForMcpServers false, a session closed before its first request starts no server", async () => {
    const { session } = await withHeldServer({ waitForMcpServers: false });
    await session.close();
    await sleep(50);
    expect(serverProcesses()).toEqual([]);
    expect(session.mcpServers?.status().map((server) => server.state)).toEqual(["closed"]);
    await expect(session.mcpServers?.reconnect("tester")).rejects.toThrow(/closed/);
  });

  it("by default, the first request waits for a server that is still connecting and offers its tools", async () => {
    const { go, session } = await withHeldServer({});
    suite.fake.enqueue({ kind: "reply", text: "First answer." });
    const turn = collect(session.send("Hello."));
    // However long the test waits, nothing is sent while the server connects; then the request offers its tools.
    await sleep(200);
    expect(modelCalls(suite.fake)).toEqual([]);
    await writeFile(go, "");
    await turn;
    expect(toolNames(modelCalls(suite.fake)[0])).toContain("mcp__tester__echo");
    await session.close();
  });

  it("a session that fails to open stops the MCP servers it started", async () => {
    const failure = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      sessionsDir: suite.dir.path,
      resume: "no-such-session",
      mcpServers: { tester: { type: "stdio", command: process.execPath, args: [SERVER], env: {} } },
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SessionNotFoundError);
    expect(serverProcesses()).toEqual([]);
  });
});
