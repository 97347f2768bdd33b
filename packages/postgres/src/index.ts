export type { SqlClientOptions } from "./create-sql-client.ts";
export { createSqlClient } from "./create-sql-client.ts";
export type { Migration, MigrationOutcome, MigrationSet } from "./migrations.ts";
export {
  checkSchema,
  loadMigrations,
  MIGRATION_TABLE,
  migrationScript,
  runMigrations,
} from "./migrations.ts";
export {
  SchemaMismatchError,
  SchemaTooNewError,
  SqlError,
  StoreLockedError,
  StoreUnavailableError,
} from "./postgres-errors.ts";
export type { ServerClientOptions } from "./server-client.ts";
export type {
  ListenOptions,
  SqlClient,
  SqlPool,
  SqlQueryable,
  SqlResult,
  SqlSubscription,
} from "./sql-client.ts";
