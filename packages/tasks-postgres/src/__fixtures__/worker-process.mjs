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
const connected = await createSqlClient({
  url,
  ...(process.env.UNFORGET_NO_NOTIFY === undefined ? {} : { notifications: false }),
});
// UNFORGET_PAUSE_AFTER=renewal|claim: the process stops itself (SIGSTOP) right after the statement that renews
// the lease of a running task, or claims one, has answered: inside its transaction when it has one, as a
// process paused by the machine at that point would be. Once, after printing {"pausing": point}.
const PAUSE_POINTS = {
  renewal: (text, values) =>
    /lease_until = now\(\) \+/.test(text) &&
    (values ?? []).some((value) => Array.isArray(value) && value.length > 0),
  claim: (text) => /lease_until = now\(\) \+/.test(text) && /job_id = \$3/.test(text),
};
const pauseAt = PAUSE_POINTS[process.env.UNFORGET_PAUSE_AFTER ?? ""];
let paused = false;
const pauseAfter = async (text, values, run) => {
  const result = await run();
  if (pauseAt !== undefined && !paused && pauseAt(text, values)) {
    paused = true;
    say({ pausing: process.env.UNFORGET_PAUSE_AFTER });
    process.kill(process.pid, "SIGSTOP");
  }
  return result;
};
const client =
  pauseAt === undefined
    ? connected
    : {
        kind: connected.kind,
        location: connected.location,
        query: (text, values) => pauseAfter(text, values, () => connected.query(text, values)),
        transaction: (work, options) =>
          connected.transaction(
            (transaction) =>
              work({
                query: (text, values) => pauseAfter(text, values, () => transaction.query(text, values)),
              }),
            options,
          ),
        listen: (...args) => connected.listen(...args),
        close: () => connected.close(),
      };
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
  await connected.close();
  process.exit(0);
});
setInterval(() => undefined, 60_000);
