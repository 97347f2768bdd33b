import {
  createFaultProxy,
  createPrivatePgServer,
  type FaultProxy,
  type PrivatePgServer,
  pgServerFromEnvironment,
} from "@unforget/testing/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChild } from "./__fixtures__/run-child.ts";
import { createSqlClient } from "./create-sql-client.ts";
import { SqlError, StoreUnavailableError } from "./postgres-errors.ts";
import type { SqlClient } from "./sql-client.ts";

const server = pgServerFromEnvironment();
const FIXTURES = new URL("./__fixtures__/migrations/", import.meta.url);

/** Waits for something that happens in the background (a reconnect, a notice), up to 20 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let wait = 0; wait < 400 && !condition(); wait++)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

describe.skipIf(server === undefined)("createSqlClient({ url }) on a PostgreSQL server", () => {
  let database: { url: string; drop(): Promise<void> };
  let client: SqlClient;

  beforeAll(async () => {
    database = await (server?.createDatabase() as Promise<{ url: string; drop(): Promise<void> }>);
    client = await createSqlClient({ url: database.url });
    await client.query("CREATE TABLE item (id integer PRIMARY KEY, label text NOT NULL)");
  });

  afterAll(async () => {
    await client?.close();
    await database?.drop();
  });

  const withUrl = (change: (url: URL) => void) => {
    const url = new URL(database.url);
    change(url);
    return url.toString();
  };

  it("a transaction with timeoutMs whose client pauses is ended by the server, its locks with it", async () => {
    await client.query("CREATE TABLE held (id integer PRIMARY KEY)");
    await client.query("INSERT INTO held VALUES (40)");
    const other = await createSqlClient({ url: database.url, poolSize: 2 });
    let attempts = 0;
    let resumedAt = Number.POSITIVE_INFINITY;
    let locked: () => void = () => undefined;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = client.transaction(
      async (transaction) => {
        attempts++;
        await transaction.query("SELECT id FROM held WHERE id = 40 FOR UPDATE");
        // The first attempt stops between two statements, as a paused process would, far past its timeout.
        if (attempts === 1) {
          locked();
          await new Promise((resolve) => setTimeout(resolve, 8_000));
          resumedAt = Date.now();
        }
        return attempts;
      },
      { timeoutMs: 500 },
    );
    await lockTaken;
    await other.transaction(async (transaction) => {
      await transaction.query("SELECT id FROM held WHERE id = 40 FOR UPDATE");
    });
    // The row was free while its holder was still paused: the server ended the holder's transaction.
    expect(Date.now()).toBeLessThan(resumedAt);
    // The client found its connection ended and ran the transaction again, which then committed.
    expect(await holder).toBe(2);
    await other.close();
  }, 60_000);

  it("never hands out a connection left inside a transaction by a text that began one", async () => {
    const single = await createSqlClient({ url: database.url, poolSize: 1 });
    // A text of several statements that fails between its BEGIN and its COMMIT (as a library's setup can).
    const failed = await single.query("BEGIN; SELECT 1 / 0; COMMIT").catch((error: unknown) => error);
    expect(failed).toMatchObject({ sqlState: "22012" });
    expect((await single.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    // One that began a transaction and did not end it: the next statement must not run inside it.
    await single.query("BEGIN; SELECT pg_current_xact_id()");
    const { rows } = await single.query<{ clean: boolean }>(
      "SELECT pg_current_xact_id_if_assigned() IS NULL AS clean",
    );
    expect(rows).toEqual([{ clean: true }]);
    await single.close();
  });

  it("runs statements and transactions, with SQL errors typed by their SQLSTATE", async () => {
    await client.transaction(async (transaction) => {
      await transaction.query("INSERT INTO item VALUES ($1, $2), ($3, $4)", [1, "one", 2, "two"]);
    });
    const duplicate = await client.query("INSERT INTO item VALUES (1, 'x')").catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(SqlError);
    expect(duplicate).toMatchObject({ sqlState: "23505", constraint: "item_pkey" });
    const rolledBack = await client
      .transaction(async (transaction) => {
        await transaction.query("INSERT INTO item VALUES (3, 'three')");
        throw new Error("the work failed");
      })
      .catch((error: unknown) => error);
    expect((rolledBack as Error).message).toBe("the work failed");
    expect((await client.query("SELECT count(*)::int AS n FROM item")).rows).toEqual([{ n: 2 }]);
    expect(client.location).toMatch(/:\d+\/unforget_test_/);
    expect(client.location).not.toContain(new URL(database.url).password || "no password");
  });

  it("shares one pool of at most 5 connections per URL in the process", async () => {
    const second = await createSqlClient({ url: database.url });
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? client : second).query("SELECT pg_sleep(0.01)"),
      ),
    );
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'unforget' AND datname = current_database()",
    );
    expect(rows[0]?.n).toBeLessThanOrEqual(5);
    await second.close();
    // The first client still works: the pool is closed with its last client only.
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("names host:port and the fix when the server is down or refuses the credentials", async () => {
    const down = await createSqlClient({ url: withUrl((url) => (url.port = "1")), retryDeadlineMs: 300 });
    const unreachable = await down.query("SELECT 1").catch((error: unknown) => error);
    await down.close();
    expect(unreachable).toBeInstanceOf(StoreUnavailableError);
    expect(unreachable).toMatchObject({ reason: "unreachable" });
    expect((unreachable as Error).message).toMatch(/:1\/.*PGHOST/);

    const wrong = await createSqlClient({ url: withUrl((url) => (url.password = "not-the-password")) });
    const refused = await wrong.query("SELECT 1").catch((error: unknown) => error);
    await wrong.close();
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect(refused).toMatchObject({ reason: "authentication" });

    const missing = await createSqlClient({ url: withUrl((url) => (url.pathname = "/no_such_database")) });
    const absent = await missing.query("SELECT 1").catch((error: unknown) => error);
    await missing.close();
    expect(absent).toMatchObject({ reason: "no-database" });
  });

  describe("through a fault proxy", () => {
    let proxy: FaultProxy;
    let proxied: SqlClient;

    beforeAll(async () => {
      const target = new URL(database.url);
      proxy = await createFaultProxy({ host: target.hostname, port: Number(target.port) });
      proxied = await createSqlClient({
        url: withUrl((url) => {
          url.hostname = proxy.host;
          url.port = String(proxy.port);
        }),
        statementTimeoutMs: 1_000,
        connectTimeoutMs: 1_000,
        retryDeadlineMs: 2_500,
      });
    });

    afterAll(async () => {
      await proxied?.close();
      await proxy?.close();
    });

    it("runs a statement again after the connection was cut", async () => {
      await proxied.query("SELECT 1");
      proxy.cut();
      expect((await proxied.query("SELECT 2 AS two")).rows).toEqual([{ two: 2 }]);
    });

    it("never hangs on a half-open connection: a blackhole past the deadline is a StoreUnavailableError", async () => {
      await proxied.query("SELECT 1");
      const silence = proxy.blackhole(6_000);
      const outcome = await proxied.query("SELECT 3").catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(StoreUnavailableError);
      await silence;
      expect((await proxied.query("SELECT 4 AS four")).rows).toEqual([{ four: 4 }]);
    });

    it("runs a transaction again when the reply to its COMMIT was lost (the work must be idempotent)", async () => {
      const cut = proxy.cutAfterCommit();
      let runs = 0;
      await proxied.transaction(async (transaction) => {
        runs++;
        await transaction.query("INSERT INTO item VALUES (100, 'once') ON CONFLICT (id) DO NOTHING");
      });
      await cut;
      expect(runs).toBe(2);
      expect((await client.query("SELECT count(*)::int AS n FROM item WHERE id = 100")).rows).toEqual([
        { n: 1 },
      ]);
    });
  });

  describe("on a server of its own, restarted mid-stream", () => {
    let own: PrivatePgServer | undefined;
    let restarted: SqlClient;

    beforeAll(async () => {
      own = await createPrivatePgServer();
      restarted = await createSqlClient({ url: own.url });
      await restarted.query("CREATE TABLE item (id integer PRIMARY KEY, label text NOT NULL)");
    });

    afterAll(async () => {
      await restarted?.close();
      await own?.close();
    });

    it("retries across an immediate restart, and listeners catch up after reconnecting", async () => {
      const received: string[] = [];
      let reconnects = 0;
      const subscription = await restarted.listen("changes", (payload) => received.push(payload), {
        onReconnect: () => reconnects++,
      });
      await restarted.query("SELECT pg_notify('changes', 'before')");
      await own?.restart({ mode: "immediate" });
      // The pool's connections died with the server: the statement is retried on a new one.
      await restarted.query("INSERT INTO item VALUES (200, 'after the restart')");
      await until(() => reconnects > 0);
      expect(reconnects).toBe(1);
      await restarted.query("SELECT pg_notify('changes', 'after')");
      await until(() => received.length >= 2);
      expect(received).toEqual(["before", "after"]);
      await subscription.close();
    });
  });

  it("8 processes booting on an empty database migrate it exactly once", async () => {
    const fresh = await (server?.createDatabase() as Promise<{ url: string; drop(): Promise<void> }>);
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => runChild(["migrate", fresh.url, new URL(FIXTURES).pathname])),
      );
      const applied = outcomes.map(([outcome]) => (outcome as { applied: number[] }).applied);
      expect(applied.filter((versions) => versions.length > 0)).toEqual([[1, 2]]);
      const check = await createSqlClient({ url: fresh.url });
      expect((await check.query("SELECT count(*)::int AS n FROM unforget_schema_migration")).rows).toEqual([
        { n: 2 },
      ]);
      await check.close();
    } finally {
      await fresh.drop();
    }
  });
});
