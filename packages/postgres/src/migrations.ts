import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { ConfigurationError } from "@unforget/core";
import { SchemaMismatchError, SchemaTooNewError } from "./postgres-errors.ts";
import type { SqlClient, SqlQueryable } from "./sql-client.ts";

/** One numbered SQL file. */
export interface Migration {
  /** From the file name: `0003_add_index.sql` is version 3. */
  version: number;
  /** The file name. */
  name: string;
  sql: string;
  /** SHA-256 of the SQL: an applied migration that was edited afterwards is refused. */
  checksum: string;
}

/** The migrations of one component (`memory`, `tasks`), versioned on their own in one table. */
export interface MigrationSet {
  component: string;
  migrations: readonly Migration[];
}

/** What `runMigrations` did. */
export interface MigrationOutcome {
  /** Versions this call applied (empty when the schema was current). */
  applied: number[];
  /** The schema's version now. */
  version: number;
}

const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;
/** The bookkeeping table, shared by every component. */
export const MIGRATION_TABLE = "unforget_schema_migration";
// One lock for every component's migrations: they also create the shared bookkeeping table.
const LOCK_KEY = 72_117_001;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${MIGRATION_TABLE} (
  component text NOT NULL,
  version integer NOT NULL,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (component, version)
)`;

/**
 * Reads the numbered SQL files of a folder (`0001_create_memory.sql`, …): contiguous from 1, each with its
 * checksum. Throws `ConfigurationError` for a gap or a badly named file.
 */
export async function loadMigrations(component: string, folder: URL | string): Promise<MigrationSet> {
  const path = typeof folder === "string" ? folder : fileURLToPath(folder);
  const files = (await readdir(path)).filter((file) => file.endsWith(".sql")).sort();
  const migrations: Migration[] = [];
  for (const [index, name] of files.entries()) {
    const match = FILE_NAME.exec(name);
    if (!match || Number(match[1]) !== index + 1) {
      throw new ConfigurationError(
        `Migration ${name} in ${path} is out of sequence: files are named NNNN_words.sql and numbered from 0001 without gaps.`,
        { setting: "migrations" },
      );
    }
    const sql = await readFile(`${path}/${name}`, "utf8");
    migrations.push({
      version: index + 1,
      name,
      sql,
      checksum: createHash("sha256").update(sql).digest("hex"),
    });
  }
  return { component, migrations };
}

interface AppliedRow {
  version: number;
  checksum: string;
}

async function appliedVersions(database: SqlQueryable, component: string): Promise<AppliedRow[] | undefined> {
  const exists = await database.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
    MIGRATION_TABLE,
  ]);
  if (!exists.rows[0]?.present) return undefined;
  const applied = await database.query<AppliedRow>(
    `SELECT version, checksum FROM ${MIGRATION_TABLE} WHERE component = $1 ORDER BY version`,
    [component],
  );
  return applied.rows.map((row) => ({ version: Number(row.version), checksum: row.checksum }));
}

/** Checks what the database has against the code's migrations; resolves to the versions still to apply. */
function pending(set: MigrationSet, applied: readonly AppliedRow[]): Migration[] {
  const known = set.migrations.length;
  const newest = applied.at(-1)?.version ?? 0;
  if (newest > known) {
    throw new SchemaTooNewError(
      `The database's ${set.component} schema is at version ${newest}, newer than this code knows (${known}): a newer Unforget migrated it. Upgrade this process's @unforget packages; never downgrade a shared database.`,
      { component: set.component, knownVersion: known, databaseVersion: newest },
    );
  }
  for (const row of applied) {
    const migration = set.migrations[row.version - 1];
    if (migration && migration.checksum !== row.checksum) {
      throw new SchemaMismatchError(
        `Migration ${migration.name} of ${set.component} was applied with other SQL than this code has (checksum ${row.checksum.slice(0, 12)}…, not ${migration.checksum.slice(0, 12)}…). Migrations are never edited after release: restore the file, and put the change in a new migration.`,
        { component: set.component, version: row.version },
      );
    }
  }
  const done = new Set(applied.map((row) => row.version));
  return set.migrations.filter((migration) => !done.has(migration.version));
}

/**
 * Brings the component's schema to the newest version: in one transaction under an advisory lock, so that
 * any number of processes booting at once migrate it exactly once and the others wait and find it done.
 * Idempotent. Throws `SchemaTooNewError` for a schema from newer code, `SchemaMismatchError` for an edited
 * migration.
 */
export async function runMigrations(client: SqlClient, set: MigrationSet): Promise<MigrationOutcome> {
  // The common case, without a lock: everything is applied already.
  const before = await appliedVersions(client, set.component);
  if (before !== undefined && pending(set, before).length === 0) {
    return { applied: [], version: before.at(-1)?.version ?? 0 };
  }
  return client.transaction(async (transaction) => {
    await transaction.query("SELECT pg_advisory_xact_lock($1)", [LOCK_KEY]);
    await transaction.query(CREATE_TABLE);
    const applied = (await appliedVersions(transaction, set.component)) ?? [];
    const todo = pending(set, applied);
    for (const migration of todo) {
      await transaction.query(migration.sql);
      await transaction.query(
        `INSERT INTO ${MIGRATION_TABLE} (component, version, name, checksum) VALUES ($1, $2, $3, $4)`,
        [set.component, migration.version, migration.name, migration.checksum],
      );
    }
    return { applied: todo.map((migration) => migration.version), version: set.migrations.length };
  });
}

/**
 * For `migrate: false`: checks that an operator applied every migration (and no newer one), without changing
 * anything. Throws `SchemaMismatchError` naming the first missing migration and the command that prints it.
 */
export async function checkSchema(client: SqlClient, set: MigrationSet): Promise<void> {
  const applied = (await appliedVersions(client, set.component)) ?? [];
  const missing = pending(set, applied)[0];
  if (missing) {
    throw new SchemaMismatchError(
      `The database lacks ${set.component} migration ${missing.name} and this store was opened with migrate: false. Have an operator apply it (\`unforget db sql --from ${missing.version - 1}\` prints the SQL), or open the store with migrate: true.`,
      { component: set.component, version: missing.version },
    );
  }
}

/**
 * The SQL an operator runs by hand for `migrate: false`: the migrations after `fromVersion` (default 0: all),
 * each recorded in the bookkeeping table, in one transaction under the same lock `runMigrations` takes.
 */
export function migrationScript(set: MigrationSet, fromVersion = 0): string {
  const todo = set.migrations.filter((migration) => migration.version > fromVersion);
  const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
  const parts = [
    `-- Unforget ${set.component} schema: migrations ${fromVersion + 1} to ${set.migrations.length}.`,
    "BEGIN;",
    `SELECT pg_advisory_xact_lock(${LOCK_KEY});`,
    `${CREATE_TABLE};`,
  ];
  for (const migration of todo) {
    parts.push(`-- ${migration.name}`, migration.sql.trim());
    parts.push(
      `INSERT INTO ${MIGRATION_TABLE} (component, version, name, checksum) VALUES (${literal(set.component)}, ${migration.version}, ${literal(migration.name)}, ${literal(migration.checksum)});`,
    );
  }
  parts.push("COMMIT;", "");
  return parts.join("\n");
}
