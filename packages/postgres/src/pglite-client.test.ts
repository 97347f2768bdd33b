import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChild } from "./__fixtures__/run-child.ts";
import { createSqlClient } from "./create-sql-client.ts";
import { describeFailure } from "./pglite-client.ts";
import { SqlError, StoreLockedError, StoreUnavailableError } from "./postgres-errors.ts";
import type { SqlClient } from "./sql-client.ts";

let parent: string;
let dataDir: string;
let client: SqlClient;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "pglite-client-"));
  dataDir = join(parent, "data");
  client = await createSqlClient({ pglite: dataDir });
});

afterAll(async () => {
  await client?.close();
  await rm(parent, { recursive: true, force: true });
});

describe("createSqlClient({ pglite })", () => {
  it("runs statements and transactions, rolling back a transaction that throws", async () => {
    await client.query("CREATE TABLE item (id integer PRIMARY KEY, label text NOT NULL)");
    await client.transaction(async (transaction) => {
      await transaction.query("INSERT INTO item VALUES ($1, $2)", [1, "one"]);
    });
    const failed = await client
      .transaction(async (transaction) => {
        await transaction.query("INSERT INTO item VALUES ($1, $2)", [2, "two"]);
        await transaction.query("INSERT INTO item VALUES ($1, $2)", [1, "again"]);
      })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SqlError);
    expect((failed as SqlError).sqlState).toBe("23505");
    const { rows } = await client.query<{ id: number }>("SELECT id FROM item ORDER BY id");
    expect(rows.map((row) => row.id)).toEqual([1]);
    expect(client.kind).toBe("pglite");
  });

  it("delivers NOTIFY payloads to listeners", async () => {
    const received: string[] = [];
    const subscription = await client.listen("changes", (payload) => received.push(payload));
    await client.transaction(async (transaction) => {
      await transaction.query("SELECT pg_notify('changes', $1)", ["42"]);
    });
    await client.query("SELECT 1");
    expect(received).toEqual(["42"]);
    expect(subscription.live).toBe(true);
    await subscription.close();
  });

  it("returns a text value that starts with U+FEFF without it (PGlite's decoder): stores select such text behind a character", async () => {
    // PGlite decodes every text value with a default TextDecoder, which drops a leading byte-order mark. When
    // this fails, PGlite keeps it, and the workaround in the stores (textColumn in team memory) can go.
    const { rows } = await client.query<{ plain: string; behind: string }>(
      "SELECT $1::text AS plain, '.' || $1::text AS behind",
      ["\ufeffmark"],
    );
    expect(rows[0]).toEqual({ plain: "mark", behind: ".\ufeffmark" });
  });

  it("refuses a second process on the same data dir, naming the holder, and never takes over", async () => {
    const [line] = await runChild(["pglite", dataDir]);
    expect(line).toMatchObject({ code: "store_locked", holderPid: process.pid });
    expect(String(line?.message)).toMatch(/server|directory store/);
    // The holder still works, and its lock is still there.
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    expect(JSON.parse(await readFile(`${dataDir}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
  });

  it("refuses to open the same data dir twice in one process", async () => {
    expect(await createSqlClient({ pglite: dataDir }).catch((error: unknown) => error)).toBeInstanceOf(
      StoreLockedError,
    );
  });

  it("opens a data dir through a symlink to it, and the lock refuses every spelling of a folder that is open", async () => {
    const alias = join(parent, "alias");
    await symlink(dataDir, alias);
    for (const spelling of [alias, `${alias}/`, join(parent, "alias", "..", "data")]) {
      const refused = await createSqlClient({ pglite: spelling }).catch((error: unknown) => error);
      expect(refused, spelling).toBeInstanceOf(StoreLockedError);
    }
    const [line] = await runChild(["pglite", alias]);
    expect(line).toMatchObject({ code: "store_locked", holderPid: process.pid });

    // A folder made through a link that points where nothing is yet, then opened by its real path and by the link.
    const real = join(parent, "real");
    const link = join(parent, "link");
    await symlink(real, link);
    const created = await createSqlClient({ pglite: link });
    await created.query("CREATE TABLE seen (id integer)");
    await created.query("INSERT INTO seen VALUES (7)");
    expect(created.location).toBe(join(await realpath(parent), "real"));
    await created.close();
    const reopened = await createSqlClient({ pglite: link });
    expect((await reopened.query<{ id: number }>("SELECT id FROM seen")).rows).toEqual([{ id: 7 }]);
    expect(await createSqlClient({ pglite: real }).catch((error: unknown) => error)).toBeInstanceOf(
      StoreLockedError,
    );
    await reopened.close();
  });

  it("says which folder could not be opened and why, never [object Object]", async () => {
    const file = join(parent, "a-file");
    await writeFile(file, "not a database\n");
    const junk = join(parent, "junk");
    await mkdir(junk);
    await writeFile(join(junk, "PG_VERSION"), "nonsense\n");
    const cases: Array<[string, RegExp]> = [
      [file, /is a file, not a folder/],
      [join(file, "data"), /not a folder/],
      [junk, /PGlite/],
    ];
    for (const [dir, why] of cases) {
      const error = await createSqlClient({ pglite: dir }).catch((failure: unknown) => failure);
      expect(error, dir).toBeInstanceOf(StoreUnavailableError);
      const { message, location } = error as StoreUnavailableError;
      expect(message).not.toContain("[object Object]");
      expect(message).toContain(location);
      expect(location.startsWith(await realpath(parent))).toBe(true);
      expect(message, dir).toMatch(why);
    }
    // The lock of a data dir that could not be opened is not left behind.
    expect(await readFile(`${junk}.lock`, "utf8").catch(() => "gone")).toBe("gone");
    // What PGlite itself throws for a folder it cannot use (here one given through a link, which the client
    // resolves first) carries no message, only Emscripten's errno: it is said in words.
    const { PGlite } = await import("@electric-sql/pglite");
    const empty = join(parent, "empty");
    await mkdir(empty);
    await symlink(empty, join(parent, "empty-link"));
    const thrown = await PGlite.create(join(parent, "empty-link")).catch((failure: unknown) => failure);
    expect(thrown).toMatchObject({ errno: 44 });
    expect(describeFailure(thrown)).toBe("ENOENT, a file or folder is missing");
  });

  it("takes over the lock of a process that died, and drops its own lock on close", async () => {
    const other = join(parent, "other");
    // A holder that is gone: a pid no process has (pids stay below 2^22 on Linux).
    await writeFile(
      `${other}.lock`,
      JSON.stringify({
        pid: 4_194_303,
        host: hostname(),
        startedAt: "2020-01-01T00:00:00.000Z",
        startTicks: "1",
      }),
    );
    const reopened = await createSqlClient({ pglite: other });
    expect(JSON.parse(await readFile(`${other}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    await reopened.close();
    expect(await readFile(`${other}.lock`, "utf8").catch(() => "gone")).toBe("gone");
    // After a close, another process may open it.
    const [line] = await runChild(["pglite", other]);
    expect(line).toMatchObject({ opened: true });
  });
});
