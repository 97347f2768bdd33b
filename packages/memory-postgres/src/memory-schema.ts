import { readFile } from "node:fs/promises";
import { loadMigrations, type MigrationSet } from "@unforget/postgres";

// Both src/ and dist/ sit one level below the package, beside migrations/ and sql/.
const MIGRATIONS = new URL("../migrations/", import.meta.url);
const ROW_LEVEL_SECURITY = new URL("../sql/row-level-security.sql", import.meta.url);

/** Team memory's migrations (component `memory`), as `runMigrations` and `unforget db sql` take them. */
export function loadMemoryMigrations(): Promise<MigrationSet> {
  return loadMigrations("memory", MIGRATIONS);
}

/**
 * The optional row-level security: each database role reaches only the namespaces granted to it in
 * `memory_namespace_grant`. Run it once as the tables' owner, after the migrations.
 */
export function rowLevelSecuritySql(): Promise<string> {
  return readFile(ROW_LEVEL_SECURITY, "utf8");
}
