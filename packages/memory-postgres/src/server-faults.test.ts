import { MemoryConflictError } from "@unforget/memory";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import {
  createFaultProxy,
  createPrivatePgServer,
  type FaultProxy,
  type PrivatePgServer,
} from "@unforget/testing/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshNamespace, server } from "./__fixtures__/stores.ts";
import { createPostgresMemoryStore, type PostgresMemoryStore } from "./postgres-memory-store.ts";
import type { MemoryChange } from "./watch-memory-changes.ts";

const HEADER = "---\nname: log\ndescription: lines appended under faults\ntype: project\n---\n";
/** The statement of a write (head, version and notice in one). */
const WRITE = /WITH head AS \(UPDATE memory/;

/** Fails instead of waiting forever for something that does not happen. */
function withTimeout<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) =>
      setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms).unref(),
    ),
  ]);
}

interface Writer {
  acknowledged: string[];
  unacknowledged: string[];
}

/** Appends lines with compare-and-swap until `stop` resolves; a failed write is noted, never retried. */
async function appendUntil(
  store: PostgresMemoryStore,
  name: string,
  stop: { done: boolean },
): Promise<Writer> {
  const writer: Writer = { acknowledged: [], unacknowledged: [] };
  for (let index = 0; !stop.done; index++) {
    const line = `- ${name} ${index}`;
    let current: { content: string; hash: string };
    try {
      current = await store.read("log.md");
    } catch {
      continue;
    }
    try {
      await store.write("log.md", `${current.content}${line}\n`, { expectedHash: current.hash });
      writer.acknowledged.push(line);
    } catch (error) {
      if (!(error instanceof MemoryConflictError)) writer.unacknowledged.push(line);
    }
  }
  return writer;
}

/** Collects every change a watch delivers until aborted. */
function collect(
  store: PostgresMemoryStore,
  after: string,
  signal: AbortSignal,
): { changes: MemoryChange[]; done: Promise<void> } {
  const changes: MemoryChange[] = [];
  const done = (async () => {
    for await (const change of store.watch({ after, signal, pollIntervalMs: 500 })) changes.push(change);
  })();
  return { changes, done };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition()) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

describe.skipIf(server === undefined)("team memory under server faults", () => {
  let own: PrivatePgServer;
  let proxy: FaultProxy;
  let direct: SqlClient;
  const clients: SqlClient[] = [];

  beforeAll(async () => {
    own = await createPrivatePgServer();
    proxy = await createFaultProxy({ host: own.host, port: own.port });
    direct = await createSqlClient({ url: own.url });
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await direct?.close();
    await proxy?.close();
    await own?.close();
  });

  const throughProxy = async (poolSize: number) => {
    const url = new URL(own.url);
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    const client = await createSqlClient({
      url: url.toString(),
      poolSize,
      statementTimeoutMs: 2_000,
      connectTimeoutMs: 2_000,
      retryDeadlineMs: 6_000,
    });
    clients.push(client);
    return client;
  };

  /**
   * Three writers through the proxy and two watchers (one through the proxy, one direct) while `fault` runs;
   * then the invariants: acknowledged lines once, unacknowledged at most once, the head hash matches the head
   * content, and each watcher saw each version once.
   */
  async function underFault(fault: () => Promise<void>): Promise<void> {
    const namespace = freshNamespace();
    const setup = await createPostgresMemoryStore({
      client: direct,
      namespaces: [namespace],
      actor: "agent:setup",
    });
    await setup.write("log.md", HEADER);
    const after = await setup.currentCursor();
    const writers = await Promise.all(
      [1, 2, 3].map(async (index) =>
        createPostgresMemoryStore({
          client: await throughProxy(index + 1),
          namespaces: [namespace],
          actor: `agent:w${index}`,
        }),
      ),
    );
    const stopWatching = new AbortController();
    const watchers = [
      collect(
        await createPostgresMemoryStore({
          client: await throughProxy(5),
          namespaces: [namespace],
          actor: "agent:watch",
        }),
        after,
        stopWatching.signal,
      ),
      collect(setup, after, stopWatching.signal),
    ];
    const stop = { done: false };
    const running = writers.map((store, index) => appendUntil(store, `w${index + 1}`, stop));
    try {
      await until(async () => ((await setup.read("log.md")).version ?? 0) >= 10);
      await fault();
      const before = (await setup.read("log.md")).version ?? 0;
      await until(async () => ((await setup.read("log.md")).version ?? 0) >= before + 10);
    } finally {
      // Whatever happened above, the writers stop: a test never leaves work running behind it.
      stop.done = true;
    }
    const results = await Promise.all(running);

    const head = await setup.read("log.md");
    const lines = head.content.split("\n").filter((line) => line.startsWith("- "));
    const count = (line: string) => lines.filter((each) => each === line).length;
    expect(results.reduce((sum, writer) => sum + writer.acknowledged.length, 0)).toBeGreaterThan(10);
    for (const writer of results) {
      for (const line of writer.acknowledged) expect(count(line), line).toBe(1);
      for (const line of writer.unacknowledged) expect(count(line), line).toBeLessThanOrEqual(1);
    }
    // One version per line, none lost and none twice: the versions are the lines in order.
    const versions = await setup.listVersions("log.md");
    expect(versions.length).toBe(lines.length + 1);
    expect(head.version).toBe(lines.length + 1);
    const { rows } = await direct.query<{ matches: boolean }>(
      "SELECT content_sha256 = encode(sha256(convert_to(content, 'UTF8')), 'hex') AS matches FROM memory WHERE namespace = $1",
      [namespace],
    );
    expect(rows).toEqual([{ matches: true }]);
    const expected = Array.from({ length: (head.version ?? 0) - 1 }, (_, index) => index + 2);
    await until(() => watchers.every((watcher) => watcher.changes.length >= expected.length));
    stopWatching.abort();
    await Promise.all(watchers.map((watcher) => watcher.done));
    for (const watcher of watchers) expect(watcher.changes.map((change) => change.version)).toEqual(expected);
  }

  it("an immediate restart mid-stream loses no acknowledged write and duplicates none", async () => {
    await underFault(() => own.restart({ mode: "immediate" }));
  }, 180_000);

  it("a connection cut after COMMIT, before its reply, is retried without a second version", async () => {
    // A write is one statement that commits on its own: the cut comes after it committed, before its reply.
    await underFault(() => withTimeout(proxy.cutAfterCommit({ statement: WRITE }), "the cut"));
  }, 180_000);

  it("a write whose COMMIT reply was lost resolves as written: its retry finds its write id", async () => {
    const namespace = freshNamespace();
    const store = await createPostgresMemoryStore({
      client: await throughProxy(6),
      namespaces: [namespace],
      actor: "agent:one",
    });
    const first = await store.write("log.md", HEADER);
    const cut = withTimeout(proxy.cutAfterCommit({ statement: WRITE }), "the cut");
    // Without the write id, the retry would find its own commit as someone else's and report a conflict.
    const written = await store.write("log.md", `${HEADER}- once\n`, { expectedHash: first.hash });
    await cut;
    expect((await store.read("log.md")).hash).toBe(written.hash);
    expect(await store.listVersions("log.md")).toHaveLength(2);
  }, 60_000);

  it("a 30 s blackhole: writes fail or wait, none is lost or doubled, and watchers catch up", async () => {
    await underFault(() => proxy.blackhole(30_000));
  }, 240_000);
});
