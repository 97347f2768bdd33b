import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqlClient } from "./create-sql-client.ts";
import {
  checkSchema,
  loadMigrations,
  MIGRATION_TABLE,
  migrationScript,
  runMigrations,
} from "./migrations.ts";
import { SchemaMismatchError, SchemaTooNewError } from "./postgres-errors.ts";
import type { SqlClient } from "./sql-client.ts";

const FIXTURES = new URL("./__fixtures__/migrations/", import.meta.url);
let parent: string;
let client: SqlClient;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "migrations-"));
  client = await createSqlClient({ pglite: join(parent, "data") });
});

afterAll(async () => {
  await client?.close();
  await rm(parent, { recursive: true, force: true });
});

describe("migrations", () => {
  it("apply in order once, record their checksums, and are a no-op the second time", async () => {
    const set = await loadMigrations("fixture", FIXTURES);
    expect(set.migrations.map((migration) => migration.name)).toEqual([
      "0001_create_thing.sql",
      "0002_add_note.sql",
    ]);
    await expect(checkSchema(client, set)).rejects.toBeInstanceOf(SchemaMismatchError);
    expect(await runMigrations(client, set)).toEqual({ applied: [1, 2], version: 2 });
    expect(await runMigrations(client, set)).toEqual({ applied: [], version: 2 });
    await checkSchema(client, set);
    await client.query("INSERT INTO thing (id, label, note) VALUES (1, 'a', 'b')");
  });

  it("run from every earlier version", async () => {
    const set = await loadMigrations("fixture", FIXTURES);
    for (let from = 0; from <= set.migrations.length; from++) {
      const component = `from_${from}`;
      const schema = `s_${from}`;
      await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(`SET search_path TO ${schema}, public`);
      const partial = { component, migrations: set.migrations.slice(0, from) };
      await runMigrations(client, partial);
      expect(await runMigrations(client, { ...set, component })).toEqual({
        applied: set.migrations.slice(from).map((migration) => migration.version),
        version: set.migrations.length,
      });
    }
    await client.query("SET search_path TO public");
  });

  it("refuse a schema from newer code and an edited migration", async () => {
    const set = await loadMigrations("fixture", FIXTURES);
    await client.query(
      `INSERT INTO ${MIGRATION_TABLE} (component, version, name, checksum) VALUES ('newer', 3, '0003_future.sql', 'x')`,
    );
    const tooNew = await runMigrations(client, { ...set, component: "newer" }).catch(
      (error: unknown) => error,
    );
    expect(tooNew).toBeInstanceOf(SchemaTooNewError);
    expect(tooNew).toMatchObject({ knownVersion: 2, databaseVersion: 3 });
    const edited = set.migrations.map((migration, index) =>
      index === 0
        ? { ...migration, sql: `${migration.sql}\n-- edited`, checksum: "0".repeat(64) }
        : migration,
    );
    const mismatch = await runMigrations(client, { component: "fixture", migrations: edited }).catch(
      (error: unknown) => error,
    );
    expect(mismatch).toBeInstanceOf(SchemaMismatchError);
    expect((mismatch as SchemaMismatchError).version).toBe(1);
  });

  it("print the SQL an operator runs for migrate: false, which brings a database up to date", async () => {
    const set = await loadMigrations("script", FIXTURES);
    const script = migrationScript(set);
    expect(script).toContain("pg_advisory_xact_lock");
    expect(script).toContain("-- 0002_add_note.sql");
    expect(migrationScript(set, 1)).not.toContain("CREATE TABLE thing");
    await client.query("CREATE SCHEMA by_hand");
    await client.query("SET search_path TO by_hand, public");
    await client.query(script.replace(/^BEGIN;$|^COMMIT;$/gm, ""));
    await checkSchema(client, set);
    await client.query("SET search_path TO public");
  });

  it("refuse a folder with a gap in the numbering", async () => {
    const folder = join(parent, "gap");
    await cp(new URL(FIXTURES), folder, { recursive: true });
    await writeFile(join(folder, "0004_skipped.sql"), "SELECT 1;");
    await expect(loadMigrations("gap", folder)).rejects.toThrow(/out of sequence/);
  });
});
