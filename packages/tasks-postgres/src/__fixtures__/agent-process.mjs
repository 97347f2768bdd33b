// An agent in its own process: a task manager on the server (through the URL it is given, e.g. a fault
// proxy), which starts the tasks it is told on stdin and prints every notification it takes, one JSON line
// each. stdin lines: {"start": spec} | {"exit": true}. It keeps taking notifications through outages.
import { createInterface } from "node:readline";
import { createSqlClient } from "@unforget/postgres";
import { createTaskManager } from "@unforget/tasks";
import { createPostgresTaskBackend } from "@unforget/tasks-postgres";

const [url, leaseMs, sessionId] = process.argv.slice(2);
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const client = await createSqlClient({ url });
const backend = await createPostgresTaskBackend({ client, leaseMs: Number(leaseMs) });
const manager = await createTaskManager({
  backend,
  sessionId,
  pollMs: 100,
  stall: { intervalMs: 100, quietMs: 500 },
  onError: () => undefined,
});
say({ ready: true, pid: process.pid });

let stopping = false;
const taking = (async () => {
  while (!stopping) {
    try {
      for (const notification of await manager.takeNotifications()) say({ notification });
    } catch (error) {
      say({ outage: error.code ?? String(error) });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();

for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.start !== undefined) say({ started: await manager.start(message.start), label: message.label });
  if (message.exit) break;
}
stopping = true;
await taking;
await manager.close();
await backend.close();
await client.close();
say({ closed: true });
process.stdin.destroy();
