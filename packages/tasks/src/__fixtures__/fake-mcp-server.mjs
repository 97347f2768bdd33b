// A stdio MCP server for the monitor tests: answers initialize and ping; with FAKE_MCP_ANSWERS=N it stops
// answering pings after N of them (a hung server), as a real one does when its event loop is stuck.
import { createInterface } from "node:readline";

const answers = Number(process.env.FAKE_MCP_ANSWERS ?? Number.POSITIVE_INFINITY);
let pings = 0;
process.stderr.write(`fake-mcp started\n`);
const reply = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.method === "initialize") {
    reply({
      id: message.id,
      result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "fake", version: "1" } },
    });
  } else if (message.method === "ping" && ++pings <= answers) {
    reply({ id: message.id, result: {} });
  }
}
