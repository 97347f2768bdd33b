import { hostname } from "node:os";
import { ConfigurationError } from "@unforget/core";
import {
  checkKeep,
  DEFAULT_MAX_MEMORY_BYTES,
  type DreamStateStore,
  hashContent,
  type LoadedMemoryIndex,
  MEMORY_INDEX_NAME,
  type MemoryContent,
  type MemoryIndexLimits,
  type MemoryStore,
  type MemoryVersion,
  normalizeMemoryName,
  type ProposalQueue,
  prefilterMemories,
  type RedactOptions,
  redactionReason,
  refuseHeadRedaction,
  restoreVersion,
  type SecretScanner,
  truncateMemoryIndex,
} from "@unforget/memory";
import { checkSchema, runMigrations, type SqlClient } from "@unforget/postgres";
import { checkAllowed, checkNamespace } from "./memory-namespaces.ts";
import { exactText, textColumn, VERSION_COLUMNS, type VersionRow, versionOf } from "./memory-rows.ts";
import { loadMemoryMigrations } from "./memory-schema.ts";
import { catalog, generatedIndex, headOf, memorySqlScope, notFound, versionRow } from "./memory-sql.ts";
import { createPostgresDreamState } from "./postgres-dream-state.ts";
import {
  deleteMemory,
  type NamespaceStore,
  renameMemory,
  type Shared,
  writeMemory,
} from "./postgres-memory-writes.ts";
import { createPostgresProposalQueue } from "./postgres-proposals.ts";
import {
  currentCursor,
  type MemoryChange,
  type WatchOptions,
  watchMemoryChanges,
} from "./watch-memory-changes.ts";

export interface PostgresMemoryStoreOptions {
  /** The database (`createSqlClient` from `@unforget/postgres`): a server, or PGlite for one machine. */
  client: SqlClient;
  /** The namespaces this store may touch (`team/<team>/project/<project>`); anything else is refused. */
  namespaces: readonly string[];
  /** The namespace `read`, `write`, … work in. Default: the first of `namespaces`. */
  namespace?: string;
  /**
   * Who this process writes as: a session, agent, user or service (`agent:reviewer`, `user:ana`). Recorded,
   * with the machine, on every version; never taken from a tool's input.
   */
  actor: string;
  /** The machine recorded with the actor. Default: the host name. */
  machine?: string;
  /**
   * Run the migrations when the store opens (default). `false` for operators who apply them by hand
   * (`unforget db sql`): the store then only checks that they were.
   */
  migrate?: boolean;
  /** Largest memory in bytes. Default 100,000. */
  maxFileBytes?: number;
  /** MEMORY.md loading limits. Default 200 lines / 25,000 bytes. */
  indexLimits?: MemoryIndexLimits;
  /** Scans every write; a finding refuses it with `MemorySecretError` before the transaction. */
  secretScanner?: SecretScanner;
  /** Close the client with the store (when the store opened it). Default false. */
  ownsClient?: boolean;
}

/** Team memory on PostgreSQL: a `MemoryStore` in one namespace, plus what only a database can do. */
export interface PostgresMemoryStore extends MemoryStore {
  /** The namespace this store works in. */
  readonly namespace: string;
  /** The same store in another namespace of the allow-list (the same client and actor). */
  inNamespace(namespace: string): PostgresMemoryStore;
  /**
   * Every change in `namespaces` (default: this store's) after the cursor `after` (default: now), each
   * exactly once, in commit order: NOTIFY wakes it; it reads the versions on connect, on reconnect and every
   * 5 s, so a lost notice only delays a change. Ends when `signal` aborts or the loop breaks.
   */
  watch(options?: WatchOptions): AsyncIterable<MemoryChange>;
  /**
   * The cursor of this moment: a watch given it as `after` sees every change committed from now on, also
   * those of transactions already running. Take it before loading state you then keep up to date by watching.
   */
  currentCursor(): Promise<string>;
  /** The queue of reviewable changes (extraction, dream) for this namespace. */
  proposals(): ProposalQueue;
  /** The dream's state, lease and reports for this namespace (`createDreamJob({ state })`). */
  dreamState(): DreamStateStore;
  /** Closes the client when the store owns it; otherwise does nothing. */
  close(): Promise<void>;
}

/**
 * Opens team memory on PostgreSQL (or PGlite) after bringing its schema up to date. Writes are one
 * transaction each — a conditional update of the head, a version row and a NOTIFY — so a stale
 * `expectedHash` is a `MemoryConflictError` with the current hash, version and author, and a retry with the
 * same `writeId` (also the client's own retry after a lost COMMIT reply) returns the first result.
 */
export async function createPostgresMemoryStore(
  options: PostgresMemoryStoreOptions,
): Promise<PostgresMemoryStore> {
  if (!Array.isArray(options.namespaces) || options.namespaces.length === 0) {
    throw new ConfigurationError(
      "createPostgresMemoryStore needs `namespaces`: at least one team/<team>/project/<project>.",
      {
        setting: "namespaces",
      },
    );
  }
  if (typeof options.actor !== "string" || options.actor.trim() === "") {
    throw new ConfigurationError(
      "createPostgresMemoryStore needs `actor`: who this process writes as (agent:<name>, user:<login>, service:<name>).",
      { setting: "actor" },
    );
  }
  const allowed = new Set(options.namespaces.map(checkNamespace));
  const migrations = await loadMemoryMigrations();
  if (options.migrate === false) {
    await checkSchema(options.client, migrations);
  } else {
    await runMigrations(options.client, migrations);
  }
  const shared: Shared = {
    client: options.client,
    allowed,
    actor: `${options.actor}@${options.machine ?? hostname()}`,
    limits: {
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_MEMORY_BYTES,
      secretScanner: options.secretScanner,
    },
    indexLimits: options.indexLimits,
    owns: options.ownsClient === true,
  };
  return storeIn(shared, checkAllowed(options.namespace ?? (options.namespaces[0] as string), allowed));
}

function storeIn(shared: Shared, namespace: string): PostgresMemoryStore {
  const scope: NamespaceStore = { ...memorySqlScope(shared.client, namespace, shared.actor), shared };
  const { client, actor } = scope;
  const store: PostgresMemoryStore = {
    namespace,
    location: `${client.location}#${namespace}`,
    inNamespace: (other) => storeIn(shared, checkAllowed(other, shared.allowed)),
    read: (name) => readMemory(scope, name),
    write: (name, content, writeOptions = {}) => writeMemory(scope, name, content, writeOptions),
    delete: (name, writeOptions = {}) => deleteMemory(scope, name, writeOptions),
    rename: (from, to, writeOptions = {}) => renameMemory(scope, from, to, writeOptions),
    list: () => catalog(scope),
    catalog: () => catalog(scope),
    search: async (query, searchOptions) => prefilterMemories(await catalog(scope), query, searchOptions),
    loadIndex: async (): Promise<LoadedMemoryIndex> =>
      truncateMemoryIndex(await generatedIndex(scope), shared.indexLimits),
    async versionedNames() {
      const { rows } = await client.query<{ path: string }>(
        "SELECT DISTINCT path FROM memory_version WHERE namespace = $1 ORDER BY path",
        [namespace],
      );
      return rows.map((row) => row.path);
    },
    listVersions: (name) => listVersions(scope, name),
    readVersion: async (name, versionId) =>
      versionOf(await versionRow(scope, client, normalizeMemoryName(name), versionId, false)),
    restore: (name, versionId, writeOptions) => restoreVersion(store, name, versionId, writeOptions),
    redactVersion: (name, versionId, redactOptions = {}) =>
      redactVersion(scope, name, versionId, redactOptions),
    pruneVersions: (name, pruneOptions) => pruneVersions(scope, name, pruneOptions?.keep),
    watch(watchOptions = {}) {
      const namespaces = (watchOptions.namespaces ?? [namespace]).map((each) =>
        checkAllowed(each, shared.allowed),
      );
      return watchMemoryChanges(client, { ...watchOptions, namespaces });
    },
    currentCursor: () => currentCursor(client),
    proposals: () => createPostgresProposalQueue(client, namespace),
    dreamState: () => createPostgresDreamState(client, namespace, actor),
    async close() {
      if (shared.owns) await client.close();
    },
  };
  return store;
}

/** `MemoryStore.read`: a head's content, hash and version; MEMORY.md is generated. */
async function readMemory(scope: NamespaceStore, name: string): Promise<MemoryContent> {
  const { client, namespace } = scope;
  const checked = normalizeMemoryName(name);
  if (checked === MEMORY_INDEX_NAME) {
    const content = await generatedIndex(scope);
    return { content, hash: hashContent(content) };
  }
  const { rows } = await client.query<{ content: string; content_sha256: string; version: number }>(
    `SELECT ${textColumn("content")}, content_sha256, version FROM memory WHERE namespace = $1 AND path = $2`,
    [namespace, checked],
  );
  const row = rows[0];
  if (row === undefined) throw notFound(scope, checked, "list the memories to see what does.");
  return {
    content: exactText(row.content),
    hash: row.content_sha256,
    version: Number(row.version),
  } satisfies MemoryContent;
}

/** `MemoryStore.listVersions`: newest first. */
async function listVersions(scope: NamespaceStore, name: string): Promise<MemoryVersion[]> {
  const { client, namespace } = scope;
  const checked = normalizeMemoryName(name);
  // The column, not the selected `id` (text): "10" sorts before "9".
  const { rows } = await client.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM memory_version WHERE namespace = $1 AND path = $2 ORDER BY memory_version.id DESC`,
    [namespace, checked],
  );
  return rows.map(versionOf);
}

/** `MemoryStore.redactVersion`: empties a kept version (never the head's), once. */
async function redactVersion(
  scope: NamespaceStore,
  name: string,
  versionId: string,
  redactOptions: RedactOptions,
): Promise<MemoryVersion> {
  const { client, actor } = scope;
  const checked = normalizeMemoryName(name);
  return client.transaction(async (transaction) => {
    const version = versionOf(await versionRow(scope, transaction, checked, versionId, true));
    refuseHeadRedaction(version, (await headOf(scope, transaction, checked, true))?.content_sha256 ?? null);
    if (version.redactedAt !== undefined) return version;
    const reason = redactionReason(redactOptions, actor);
    const { rows } = await transaction.query<VersionRow>(
      `UPDATE memory_version SET content = '', redacted_at = now(), reason = $2 WHERE id = $1 RETURNING ${VERSION_COLUMNS}`,
      [versionId, reason],
    );
    return versionOf(rows[0] as VersionRow);
  });
}

/** `MemoryStore.pruneVersions`: keeps the newest `keep` versions and the head's. */
async function pruneVersions(
  scope: NamespaceStore,
  name: string,
  keepOption: number,
): Promise<{ removed: number }> {
  const { client, namespace } = scope;
  const checked = normalizeMemoryName(name);
  const keep = checkKeep(keepOption);
  return client.transaction(async (transaction) => {
    const head = await headOf(scope, transaction, checked, true);
    const { rowCount } = await transaction.query(
      `DELETE FROM memory_version WHERE namespace = $1 AND path = $2
         AND id NOT IN (SELECT id FROM memory_version WHERE namespace = $1 AND path = $2 ORDER BY id DESC LIMIT $3)
         AND version IS DISTINCT FROM $4::integer`,
      [namespace, checked, keep, head?.version ?? null],
    );
    return { removed: rowCount };
  });
}
