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
 * The optional row-level security: each database role reads only the namespaces granted to it in
 * `memory_namespace_grant` and writes only those granted with access `write`; only the tables' owner changes
 * the grants. Run it as the owner after the migrations (idempotent).
 */
export function rowLevelSecuritySql(): Promise<string> {
  return readFile(ROW_LEVEL_SECURITY, "utf8");
}
