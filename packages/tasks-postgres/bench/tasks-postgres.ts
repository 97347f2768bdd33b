// Tasks on PostgreSQL against the local file manager, in the same run. Needs a server (run it under
// `pg_virtualenv -t -o max_connections=200`) and the built packages (the workers are child processes).
// Usage: tsx bench/tasks-postgres.ts [outputBytes] (default 1 GB). Prints Markdown for BENCHMARKS.md.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createSqlClient } from "@unforget/postgres";
import { createTaskManager, type TaskManager } from "@unforget/tasks";
import { pgServerFromEnvironment } from "@unforget/testing/postgres";
import { createPostgresTaskBackend } from "../src/index.ts";

const BYTES = Number(process.argv[2] ?? 1_000_000_000);
const WORKER = fileURLToPath(new URL("../src/__fixtures__/worker-process.mjs", import.meta.url));
const PRINT_LINES = fileURLToPath(new URL("../../tasks/src/__fixtures__/print-lines.mjs", import.meta.url));
const MB = 1024 * 1024;
const LEASE_MS = 3_000;

const server = pgServerFromEnvironment();
if (server === undefined) throw new Error("Run under pg_virtualenv: this benchmark needs a server.");
const folder = await mkdtemp(join(tmpdir(), "tasks-pg-bench-"));
const children: ReturnType<typeof spawn>[] = [];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Starts `count` worker processes on `url`; resolves once each is ready. */
async function startWorkers(url: string, count: number, env: Record<string, string> = {}) {
  const started = [];
  for (let index = 0; index < count; index++) {
    const child = spawn(
      process.execPath,
      [WORKER, url, await mkdtemp(join(folder, "worker-")), String(LEASE_MS), "4"],
      { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } },
    );
    children.push(child);
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async <T>(matches: (value: T) => boolean) => {
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error("a worker exited");
        const parsed = JSON.parse(value as string) as T;
        if (matches(parsed)) return parsed;
      }
    };
    await next<{ ready?: boolean }>((line) => line.ready === true);
    started.push({ child, next });
  }
  return started;
}

function stop(workers: { child: ReturnType<typeof spawn> }[]): void {
  for (const { child } of workers) child.kill("SIGKILL");
}

async function openDatabase(options: { notifications?: false } = {}) {
  const database = await server!.createDatabase();
  const client = await createSqlClient({ url: database.url, ...options });
  const backend = await createPostgresTaskBackend({ client, leaseMs: LEASE_MS });
  const manager = await createTaskManager({ backend, sessionId: "bench", pollMs: 50 });
  return {
    url: database.url,
    client,
    manager,
    async close() {
      await manager.close();
      await backend.close();
      await client.close();
      await database.drop();
    },
  };
}

async function fileManager(): Promise<{ manager: TaskManager; close(): Promise<void> }> {
  const dir = await mkdtemp(join(folder, "files-"));
  const manager = await createTaskManager({ dir, pollMs: 50, leaseMs: LEASE_MS });
  return { manager, close: () => manager.close() };
}

/** Milliseconds from `start()` to the command's first instruction (it prints the time it began). */
async function enqueueToStart(manager: TaskManager, runs: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let run = 0; run < runs; run++) {
    const before = Date.now();
    const id = await manager.start({ type: "local_bash", command: "date +%s%3N" });
    await manager.wait(id, { timeoutMs: 60_000 });
    latencies.push(Number((await manager.readOutput(id)).data.trim()) - before);
  }
  return latencies;
}

async function throughput(manager: TaskManager, count: number): Promise<number> {
  const started = performance.now();
  const ids = await Promise.all(
    Array.from({ length: count }, () => manager.start({ type: "local_bash", command: "true" })),
  );
  for (const id of ids) await manager.wait(id, { timeoutMs: 300_000 });
  return count / ((performance.now() - started) / 1000);
}

async function readEverything(manager: TaskManager, id: string): Promise<number> {
  let offset = 0;
  for (;;) {
    const chunk = await manager.readOutput(id, offset);
    offset = chunk.nextOffset;
    if (chunk.done) return offset;
    if (chunk.data === "") await sleep(5);
  }
}

const rows: string[] = [];
const row = (...cells: (string | number)[]) => rows.push(`| ${cells.join(" | ")} |`);
try {
  // 1. Enqueue to start.
  const files = await fileManager();
  const local = await enqueueToStart(files.manager, 30);
  const notify = await openDatabase();
  let workers = await startWorkers(notify.url, 1);
  const withNotify = await enqueueToStart(notify.manager, 30);
  stop(workers);
  await notify.close();
  const polling = await openDatabase({ notifications: false });
  workers = await startWorkers(polling.url, 1, { UNFORGET_NO_NOTIFY: "1" });
  const withPolling = await enqueueToStart(polling.manager, 10);
  stop(workers);
  await polling.close();
  row(
    "enqueue → start p50 / p95: file manager (runs it itself)",
    `${percentile(local, 50)} / ${percentile(local, 95)} ms`,
    "1×",
  );
  row(
    "enqueue → start p50 / p95: PostgreSQL, NOTIFY",
    `${percentile(withNotify, 50)} / ${percentile(withNotify, 95)} ms`,
    `${(percentile(withNotify, 50) / Math.max(1, percentile(local, 50))).toFixed(1)}×`,
  );
  row(
    "enqueue → start p50 / p95: PostgreSQL, polling (no LISTEN; worker polls every 100 ms)",
    `${percentile(withPolling, 50)} / ${percentile(withPolling, 95)} ms`,
    `${(percentile(withPolling, 50) / Math.max(1, percentile(local, 50))).toFixed(1)}×`,
  );

  // 2. Tasks per second.
  const localRate = await throughput(files.manager, 200);
  row("tasks/s (200 × `true`): file manager", localRate.toFixed(1), "1×");
  for (const count of [1, 4, 8]) {
    const database = await openDatabase();
    workers = await startWorkers(database.url, count);
    const rate = await throughput(database.manager, 200);
    row(
      `tasks/s: ${count} worker process${count === 1 ? "" : "es"} × 4 slots`,
      rate.toFixed(1),
      `${(rate / localRate).toFixed(2)}×`,
    );
    stop(workers);
    await database.close();
  }

  // 3. Dead-worker detection: kill -9 the worker of a running task; time until another claims it.
  {
    const database = await openDatabase();
    workers = await startWorkers(database.url, 2);
    const id = await database.manager.start({ type: "local_bash", command: "sleep 30" });
    let record = await database.manager.get(id);
    while (record.pid === undefined) {
      await sleep(20);
      record = await database.manager.get(id);
    }
    const owner = (
      await database.client.query<{ pid: number }>(
        "SELECT (record->'owner'->>'pid')::int AS pid FROM unforget_task WHERE id = $1",
        [id],
      )
    ).rows[0]!.pid;
    process.kill(record.pid, "SIGKILL");
    const killedAt = performance.now();
    process.kill(owner, "SIGKILL");
    while ((await database.manager.get(id)).attempt !== 2) await sleep(20);
    const detection = performance.now() - killedAt;
    row(
      `dead worker → task claimed elsewhere (lease ${LEASE_MS} ms)`,
      `${detection.toFixed(0)} ms`,
      `${(detection / LEASE_MS).toFixed(2)}× the lease`,
    );
    stop(workers);
    await database.manager.stop(id).catch(() => undefined);
    await database.close();
  }

  // 4 and 5. Output throughput and the worker's memory while streaming.
  {
    const localId = await files.manager.start({
      type: "local_bash",
      command: `node ${PRINT_LINES} ${BYTES}`,
    });
    await files.manager.wait(localId, { timeoutMs: 600_000 });
    const info = await files.manager.get(localId);
    const catStart = performance.now();
    spawnSync("sh", ["-c", `cat '${info.outputPath!}' > /dev/null`]);
    const catMs = performance.now() - catStart;
    const localStart = performance.now();
    await readEverything(files.manager, localId);
    const localMs = performance.now() - localStart;

    const database = await openDatabase();
    workers = await startWorkers(database.url, 1, { UNFORGET_REPORT_RSS: "1" });
    const baseline = (await workers[0]!.next<{ rss?: number }>((line) => line.rss !== undefined)).rss!;
    const streamStart = performance.now();
    const id = await database.manager.start({ type: "local_bash", command: `node ${PRINT_LINES} ${BYTES}` });
    const streamed = await readEverything(database.manager, id);
    const streamMs = performance.now() - streamStart;
    const { peak } = await workers[0]!.next<{ peak?: number }>((line) => line.peak !== undefined);
    const readStart = performance.now();
    await readEverything(database.manager, id);
    const readMs = performance.now() - readStart;
    const rate = (bytes: number, ms: number) => bytes / MB / (ms / 1000);
    row(
      `\`cat\` of the finished ${(info.outputBytes / MB).toFixed(0)} MB file`,
      `${rate(info.outputBytes, catMs).toFixed(0)} MB/s`,
      "1×",
    );
    row(
      "readOutput, file manager, finished file",
      `${rate(info.outputBytes, localMs).toFixed(0)} MB/s`,
      `${(rate(info.outputBytes, localMs) / rate(info.outputBytes, catMs)).toFixed(2)}× cat`,
    );
    row(
      "readOutput from PostgreSQL, finished task",
      `${rate(streamed, readMs).toFixed(0)} MB/s`,
      `${(rate(streamed, readMs) / rate(info.outputBytes, catMs)).toFixed(2)}× cat`,
    );
    row(
      "PostgreSQL: written, shipped and tailed to done (end to end)",
      `${rate(streamed, streamMs).toFixed(0)} MB/s`,
      `${(rate(streamed, streamMs) / rate(info.outputBytes, catMs)).toFixed(2)}× cat`,
    );
    row(
      `**worker RSS growth while streaming ${(streamed / MB).toFixed(0)} MB** (target ≤ 64 MB)`,
      `**${((peak! - baseline) / MB).toFixed(1)} MB**`,
      "",
    );
    stop(workers);
    await database.close();
  }
  await files.close();

  const catVersion = execFileSync("cat", ["--version"], { encoding: "utf8" }).split("\n")[0];
  console.log(
    `Machine: ${cpus().length} cores, ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}, ${catVersion}, PostgreSQL ${process.env.PGVERSION ?? "15"} on loopback; lease ${LEASE_MS} ms.`,
  );
  console.log("");
  console.log("| measure | value | against the file manager (same run) |");
  console.log("| --- | --- | --- |");
  for (const line of rows) console.log(line);
} finally {
  for (const child of children) child.kill("SIGKILL");
  await rm(folder, { recursive: true, force: true });
}
