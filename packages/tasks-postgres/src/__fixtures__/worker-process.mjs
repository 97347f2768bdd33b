// A task worker in its own process, so that a test can kill it with SIGKILL, pause it with SIGSTOP, cut its
// connection or measure its memory. It runs the built packages (the tests run after the build).
// argv: <url> <dir> <leaseMs> <concurrency>. Prints one JSON line per event on stdout; with
// UNFORGET_REPORT_RSS set, its RSS and peak every 200 ms.
import { createSqlClient } from "@unforget/postgres";
import { PORTABLE_TASK_TYPES } from "@unforget/tasks";
import { createTaskWorker } from "@unforget/tasks-postgres";

const [url, dir, leaseMs, concurrency] = process.argv.slice(2);
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
// UNFORGET_NO_NOTIFY: no LISTEN (as behind PgBouncer's transaction pooling): the worker polls.
const client = await createSqlClient({
  url,
  ...(process.env.UNFORGET_NO_NOTIFY === undefined ? {} : { notifications: false }),
});
const worker = await createTaskWorker({
  client,
  dir,
  types: PORTABLE_TASK_TYPES,
  concurrency: Number(concurrency),
  leaseMs: Number(leaseMs),
  pollMs: 100,
  graceMs: 300,
  stall: { intervalMs: 100, quietMs: 500 },
  onError: (error) => process.stderr.write(`[worker ${process.pid}] ${error.code}: ${error.message}\n`),
});
say({ ready: true, id: worker.id, pid: process.pid });
if (process.env.UNFORGET_REPORT_RSS !== undefined) {
  let peak = 0;
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
    say({ rss: process.memoryUsage().rss, peak });
  }, 200);
}
process.on("SIGTERM", async () => {
  await worker.close();
  await client.close();
  process.exit(0);
});
setInterval(() => undefined, 60_000);
