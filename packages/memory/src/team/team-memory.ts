import { createMemoryDir, type MemoryDir, type MemoryDirOptions } from "../dir/memory-dir.ts";
import { checkNoSecrets } from "../store/memory-rules.ts";
import type { MemoryStore } from "../store/memory-store.ts";
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

/**
 * Team memory in a store the application opens (a PostgreSQL server, an embedded PGlite, a service): memory
 * defines the `MemoryStore` it must implement and never names a backend, so the arrow points from the backend
 * to memory. `open` is called once, with the scanner the store must run on every write before anything is
 * written; the store comes back as it was opened (its own members, such as `close()`, included).
 */
export interface TeamMemoryOpenOptions<Store extends MemoryStore> extends ScanOption {
  /** Called once: opens the store with `secretScanner` as the check its writes pass before anything is written. */
  open(scan: { secretScanner: SecretScanner }): Promise<Store>;
}

/** One of: a folder, a store the application opens with the scanner, or a store you opened (wrapped). */
export type TeamMemoryOptions =
  | TeamMemoryFolderOptions
  | TeamMemoryOpenOptions<MemoryStore>
  | ({ store: MemoryStore } & ScanOption);

/**
 * Team memory: a store whose every write is scanned for secrets (cloud keys, private keys, provider API keys,
 * VCS, chat, mail, payment and registry tokens, JWTs, credentials in URLs and assignments) and refused with
 * `MemorySecretError` naming the rule, before anything is written. In a folder (`root`) it is a memory dir; a
 * database store is opened by the application (`open`, handed the scanner); or pass any `store`, whose writes
 * are then scanned before they reach it. Callers do not change when the team moves from one to the other.
 */
export async function createTeamMemory(options: TeamMemoryFolderOptions): Promise<MemoryDir>;
export async function createTeamMemory<Store extends MemoryStore>(
  options: TeamMemoryOpenOptions<Store>,
): Promise<Store>;
export async function createTeamMemory(options: TeamMemoryOptions): Promise<MemoryStore>;
export async function createTeamMemory(options: TeamMemoryOptions): Promise<MemoryStore> {
  const secretScanner = options.secretScanner ?? createSecretScanner();
  if ("store" in options) return scanningWrites(options.store, secretScanner);
  if ("open" in options) return options.open({ secretScanner });
  return createMemoryDir({ ...options, secretScanner });
}

/** `store` with every write's content scanned first (a rename or a delete adds no content). */
function scanningWrites(store: MemoryStore, scanner: SecretScanner): MemoryStore {
  return Object.freeze({
    ...bindAll(store),
    location: store.location,
    async write(name, content, options) {
      const incomplete =
        typeof content === "string" ? await checkNoSecrets(name, content, scanner) : undefined;
      const written = await store.write(name, content, options);
      if (incomplete === undefined) return written;
      return { ...written, warnings: [...(written.warnings ?? []), incomplete] };
    },
  } satisfies MemoryStore);
}

/**
 * The store's members bound to it, so that spreading them keeps them working. Written out member by member: the
 * compiler then names any member a new version of `MemoryStore` adds (a key list once left out `versionedNames`).
 */
function bindAll(store: MemoryStore): MemoryStore {
  return {
    location: store.location,
    read: (name) => store.read(name),
    write: (name, content, options) => store.write(name, content, options),
    delete: (name, options) => store.delete(name, options),
    rename: (from, to, options) => store.rename(from, to, options),
    list: () => store.list(),
    catalog: () => store.catalog(),
    search: (query, options) => store.search(query, options),
    loadIndex: () => store.loadIndex(),
    restore: (name, versionId, options) => store.restore(name, versionId, options),
    versionedNames: () => store.versionedNames(),
    listVersions: (name) => store.listVersions(name),
    readVersion: (name, versionId) => store.readVersion(name, versionId),
    redactVersion: (name, versionId, options) => store.redactVersion(name, versionId, options),
    pruneVersions: (name, options) => store.pruneVersions(name, options),
  };
}
