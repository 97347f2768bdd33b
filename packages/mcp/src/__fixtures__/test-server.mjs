// An MCP server written with the SDK, for the tests. `node test-server.mjs [mode]`, modes: serve (default),
// exit-at-start, hang, wait-for FILE (serves once FILE exists). Also served over streamable HTTP by test-http-server.ts through createTestServer().
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const object = (properties = {}, required = []) => ({ type: "object", properties, required });

const TOOLS = [
  {
    name: "echo",
    description: "Says the text back.",
    inputSchema: object({ text: { type: "string" } }, ["text"]),
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  { name: "picture", description: "A one-pixel image and a caption.", inputSchema: object() },
  {
    name: "measure",
    description: "Structured content only.",
    inputSchema: object(),
    outputSchema: object({ size: { type: "number" } }, ["size"]),
  },
  { name: "refuse", description: "Always fails.", inputSchema: object() },
  {
    name: "slow",
    description: "Answers after `ms` milliseconds.",
    inputSchema: object({ ms: { type: "number" } }),
  },
  { name: "crash", description: "Exits in the middle of the call.", inputSchema: object() },
  { name: "garbage", description: "Answers with a result that is not a tool result.", inputSchema: object() },
  { name: "chatter", description: "Prints a log line on stdout, then answers.", inputSchema: object() },
  { name: "grow", description: "Adds a tool and says the list changed.", inputSchema: object() },
  { name: "tool with spaces/and.dots", description: "A name providers refuse.", inputSchema: object() },
];

export function createTestServer({ writeRaw } = {}) {
  const tools = [...TOOLS];
  const server = new Server(
    { name: "unforget-test-server", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } }, instructions: "Use echo to test." },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "echo":
        return { content: [{ type: "text", text: `echo: ${args.text}` }] };
      case "picture":
        return {
          content: [
            { type: "text", text: "a red pixel" },
            { type: "image", data: PIXEL, mimeType: "image/png" },
          ],
        };
      case "measure":
        return { content: [], structuredContent: { size: 42 } };
      case "refuse":
        return { content: [{ type: "text", text: "no, never" }], isError: true };
      case "slow":
        await sleep(Number(args.ms ?? 60_000), undefined, { signal: extra.signal }).catch(() => undefined);
        return { content: [{ type: "text", text: "finally" }] };
      case "crash":
        process.exit(3);
        break;
      case "garbage":
        writeRaw?.(
          `${JSON.stringify({ jsonrpc: "2.0", id: extra.requestId, result: { content: "not a list" } })}\n`,
        );
        return new Promise(() => undefined);
      case "chatter":
        writeRaw?.("starting up, please wait\n");
        return { content: [{ type: "text", text: "done" }] };
      case "grow":
        tools.push({ name: "grown", description: "Added at run time.", inputSchema: object() });
        await server.sendToolListChanged();
        return { content: [{ type: "text", text: "grown" }] };
      default:
        return { content: [{ type: "text", text: `called ${request.params.name}` }] };
    }
  });
  return server;
}

const mode = process.argv[2];
if (mode !== undefined || process.argv[1]?.endsWith("test-server.mjs")) {
  if (mode === "exit-at-start") {
    process.stderr.write("fatal: missing API token\n");
    process.exit(2);
  } else if (mode === "hang") {
    process.stdin.resume();
  } else {
    // Waits for the file; a parent that died meanwhile (a failed test that never wrote it) ends the wait too.
    const parent = process.ppid;
    if (mode === "wait-for")
      while (!existsSync(process.argv[3])) {
        if (process.ppid !== parent) process.exit(0);
        await sleep(20);
      }
    const server = createTestServer({ writeRaw: (text) => process.stdout.write(text) });
    await server.connect(new StdioServerTransport());
  }
}
