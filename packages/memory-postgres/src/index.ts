export type { MemoryImportReport } from "./import-memory-history.ts";
export { importMemoryHistory } from "./import-memory-history.ts";
export { loadMemoryMigrations, rowLevelSecuritySql } from "./memory-schema.ts";
export type { OpenPostgresMemoryStoreOptions } from "./open-postgres-memory-store.ts";
export { openPostgresMemoryStore } from "./open-postgres-memory-store.ts";
export type { PostgresMemoryStore, PostgresMemoryStoreOptions } from "./postgres-memory-store.ts";
export { createPostgresMemoryStore } from "./postgres-memory-store.ts";
export type { MemoryChange, WatchOptions } from "./watch-memory-changes.ts";
