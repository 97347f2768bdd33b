import { ConfigurationError } from "@unforget/core";
import { createMemoryDir, type MemoryDir, type MemoryDirOptions } from "./memory-dir.ts";
import { checkNoSecrets } from "./memory-rules.ts";
import type { MemoryStore } from "./memory-store.ts";
import { createSecretScanner, type SecretScanner } from "./secret-scan.ts";

interface ScanOption {
  /** Replaces the default scanner (secretlint's recommended rules plus rules for gitleaks' families). */
  secretScanner?: SecretScanner;
}

/** Team memory in a folder everyone reaches (a network drive, a sync tool, git). */
export interface TeamMemoryFolderOptions extends Omit<MemoryDirOptions, "secretScanner">, ScanOption {
  /** The team's own folder, with its own MEMORY.md. */
  root: string;
}

/** Team memory on a PostgreSQL server or an embedded PGlite, through `@unforget/memory-postgres`. */
export interface TeamMemoryDatabaseOptions extends ScanOption {
  /** A server (`postgres://…`); one of `url` and `pglite`. */
  url?: string;
  /** An embedded database's data dir (one process at a time). */
  pglite?: string;
  /** The team's namespace, `team/<team>/project/<project>`. */
  namespace: string;
  /** Who this process writes as (`agent:<name>@<machine>`, `user:<login>`), recorded on every version. */
  actor: string;
}

/** One of: a folder, a database, or a store you opened (its writes are then scanned for secrets too). */
export type TeamMemoryOptions =
  | TeamMemoryFolderOptions
  | TeamMemoryDatabaseOptions
  | ({ store: MemoryStore } & ScanOption);

/** What `@unforget/memory-postgres` offers team memory; imported on demand, so memory does not depend on it. */
interface PostgresMemoryModule {
  openPostgresMemoryStore(
    options: TeamMemoryDatabaseOptions & { secretScanner: SecretScanner },
  ): Promise<MemoryStore>;
}

// A variable specifier: memory-postgres depends on memory, never the other way, even for the type checker.
const POSTGRES_MEMORY = "@unforget/memory-postgres";

/**
 * Team memory: a store whose every write is scanned for secrets (cloud keys, private keys, provider API keys,
 * VCS, chat, mail, payment and registry tokens, JWTs, credentials in URLs and assignments) and refused with
 * `MemorySecretError` naming the rule, before anything is written. In a folder (`root`) it is a memory dir; on
 * a database (`url`, or `pglite` for one machine) it is `@unforget/memory-postgres`'s store (install it); or
 * pass any `store`. Callers do not change when the team moves from one to the other.
 */
export async function createTeamMemory(options: TeamMemoryFolderOptions): Promise<MemoryDir>;
export async function createTeamMemory(options: TeamMemoryOptions): Promise<MemoryStore>;
export async function createTeamMemory(options: TeamMemoryOptions): Promise<MemoryStore> {
  const secretScanner = options.secretScanner ?? createSecretScanner();
  if ("store" in options) return scanningWrites(options.store, secretScanner);
  if ("url" in options || "pglite" in options) {
    let module: PostgresMemoryModule;
    try {
      module = (await import(POSTGRES_MEMORY)) as PostgresMemoryModule;
    } catch (error) {
      throw new ConfigurationError(
        `Team memory on a database needs ${POSTGRES_MEMORY}: install it (pnpm add ${POSTGRES_MEMORY}), or pass \`root\` for a folder.`,
        { setting: "url", cause: error },
      );
    }
    return module.openPostgresMemoryStore({ ...options, secretScanner });
  }
  return createMemoryDir({ ...options, secretScanner });
}

/** `store` with every write's content scanned first (a rename or a delete adds no content). */
function scanningWrites(store: MemoryStore, scanner: SecretScanner): MemoryStore {
  return Object.freeze({
    ...bindAll(store),
    location: store.location,
    async write(name, content, options) {
      if (typeof content === "string") await checkNoSecrets(name, content, scanner);
      return store.write(name, content, options);
    },
  } satisfies MemoryStore);
}

/** The store's members bound to it, so that spreading them keeps them working. */
function bindAll(store: MemoryStore): MemoryStore {
  const bound: Record<string, unknown> = {};
  for (const key of [
    "read",
    "write",
    "delete",
    "rename",
    "list",
    "catalog",
    "search",
    "loadIndex",
    "restore",
    "listVersions",
    "readVersion",
    "redactVersion",
    "pruneVersions",
  ] as const) {
    bound[key] = (store[key] as (...args: unknown[]) => unknown).bind(store);
  }
  return bound as unknown as MemoryStore;
}
