import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { McpServerError } from "./mcp-errors.ts";
import { createMcpStdioClient } from "./mcp-stdio-client.ts";

const SERVER = fileURLToPath(new URL("./__fixtures__/test-server.mjs", import.meta.url));
const children: ChildProcess[] = [];

function start(mode = "serve") {
  const child = spawn(process.execPath, [SERVER, mode], { stdio: ["pipe", "pipe", "ignore"] });
  children.push(child);
  return child;
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill();
      await once(child, "exit");
    }
  }
});

describe("createMcpStdioClient", () => {
  it("makes the handshake over a server's own pipes and pings it", async () => {
    const child = start();
    const client = createMcpStdioClient(child.stdin!, child.stdout!);
    await client.initialize(10_000);
    await expect(client.ping(10_000)).resolves.toBeUndefined();
    await expect(client.ping(10_000)).resolves.toBeUndefined();
  });

  it("refuses a ping before the handshake, with a typed error naming the server", async () => {
    const child = start();
    const client = createMcpStdioClient(child.stdin!, child.stdout!, { server: "notes" });
    const error = await client.ping(1_000).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpServerError);
    expect(error).toMatchObject({ server: "notes", kind: "protocol" });
  });

  it("rejects the handshake of a server that exits at start", async () => {
    const child = start("exit-at-start");
    const client = createMcpStdioClient(child.stdin!, child.stdout!);
    await expect(client.initialize(10_000)).rejects.toThrow();
  });
});
