import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { ConfigurationError } from "@unforget/core";
import {
  checkExpectedHash,
  checkKeep,
  checkMemoryContent,
  checkWriteOptions,
  DEFAULT_MAX_MEMORY_BYTES,
  type DreamStateStore,
  hashContent,
  type LoadedMemoryIndex,
  MEMORY_INDEX_NAME,
  MemoryConflictError,
  type MemoryContent,
  type MemoryIndexLimits,
  type MemoryStore,
  type MemoryWriteOptions,
  memoryIndexPreamble,
  normalizeMemoryName,
  type ProposalQueue,
  prefilterMemories,
  redactionReason,
  refuseHeadRedaction,
  refuseIndexName,
  replayWrite,
  restoreVersion,
  type SecretScanner,
  truncateMemoryIndex,
} from "@unforget/memory";
import { checkSchema, runMigrations, type SqlClient, type SqlQueryable } from "@unforget/postgres";
import { checkAllowed, checkNamespace } from "./memory-namespaces.ts";
import { exactText, textColumn, VERSION_COLUMNS, type VersionRow, versionOf } from "./memory-rows.ts";
import { loadMemoryMigrations } from "./memory-schema.ts";
import { type HeadCondition, isVersionTaken, isWriteIdTaken, memorySql } from "./memory-sql.ts";
import { createPostgresDreamState } from "./postgres-dream-state.ts";
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

/** Rounds a change is tried while concurrent changes of the same memory keep winning, before a conflict. */
const RACE_ROUNDS = 3;

/** The conflict of a change that lost every round to concurrent changes of the same memory. */
function keptChanging(name: string, expectedHash: string | null | undefined) {
  return new MemoryConflictError(`${name} kept changing while it was written; read it again and retry.`, {
    memoryName: name,
    expectedHash: expectedHash ?? null,
    actualHash: null,
  });
}

interface Shared {
  client: SqlClient;
  allowed: ReadonlySet<string>;
  actor: string;
  limits: { maxFileBytes: number; secretScanner: SecretScanner | undefined };
  indexLimits: MemoryIndexLimits | undefined;
  owns: boolean;
}

function storeIn(shared: Shared, namespace: string): PostgresMemoryStore {
  const { client, actor } = shared;
  const location = `${client.location}#${namespace}`;
  const {
    notFound,
    headOf,
    asHead,
    outcomeOf,
    lockedHead,
    recall,
    insertVersion,
    insertHead,
    writeStatement,
    catalog,
    generatedIndex,
    versionRow,
  } = memorySql(client, namespace, actor);

  /**
   * Runs one change as a transaction, with a write id always (the caller's or a new one), so that the client's
   * retry after a lost COMMIT reply and a second caller racing with the same id both get the first outcome.
   */
  const change = async <T>(
    writeOptions: MemoryWriteOptions,
    attempt: { name: string; operation: string; hash?: string | null },
    replay: (first: { hash: string | null }) => T,
    work: (transaction: SqlQueryable, writeId: string) => Promise<T>,
  ): Promise<T> => {
    const writeId = writeOptions.writeId ?? `auto:${randomUUID()}`;
    // Wrapped, so that a replayed `undefined` (a delete's outcome) differs from "never ran".
    const replayed = async (database: SqlQueryable): Promise<{ outcome: T } | undefined> => {
      const first = await recall(database, writeId);
      return first === undefined ? undefined : { outcome: replay(replayWrite(writeId, first, attempt)) };
    };
    let attempts = 0;
    for (let round = 1; ; round++) {
      try {
        return await client.transaction(async (transaction) => {
          attempts++;
          // A new id cannot have been used yet, unless this is the client running the transaction again.
          const again =
            writeOptions.writeId === undefined && attempts === 1 ? undefined : await replayed(transaction);
          return again === undefined ? work(transaction, writeId) : again.outcome;
        });
      } catch (error) {
        // Another call with the same id committed first (the unique write id refused ours): give its outcome.
        if (isWriteIdTaken(error)) {
          const again = await replayed(client);
          if (again !== undefined) return again.outcome;
        }
        // A concurrent change of the memory committed while this one counted its versions: run it again.
        if (isVersionTaken(error)) {
          if (round < RACE_ROUNDS) continue;
          throw keptChanging(attempt.name, writeOptions.expectedHash);
        }
        throw error;
      }
    }
  };

  const writeIndex = async (content: string, writeOptions: MemoryWriteOptions) =>
    client.transaction(async (transaction) => {
      await transaction.query(
        "INSERT INTO memory_index (namespace, preamble) VALUES ($1, $2) ON CONFLICT (namespace) DO NOTHING",
        [namespace, memoryIndexPreamble(undefined)],
      );
      await transaction.query("SELECT 1 FROM memory_index WHERE namespace = $1 FOR UPDATE", [namespace]);
      const current = await generatedIndex(transaction);
      checkExpectedHash(MEMORY_INDEX_NAME, writeOptions.expectedHash, { hash: hashContent(current) });
      await transaction.query(
        "UPDATE memory_index SET preamble = $2, changed_at = now() WHERE namespace = $1",
        [namespace, memoryIndexPreamble(content)],
      );
      return { hash: hashContent(await generatedIndex(transaction)) };
    });

  const store: PostgresMemoryStore = {
    namespace,
    location,

    inNamespace(other) {
      return storeIn(shared, checkAllowed(other, shared.allowed));
    },

    async read(name) {
      const checked = normalizeMemoryName(name);
      if (checked === MEMORY_INDEX_NAME) {
        const content = await generatedIndex();
        return { content, hash: hashContent(content) };
      }
      const { rows } = await client.query<{ content: string; content_sha256: string; version: number }>(
        `SELECT ${textColumn("content")}, content_sha256, version FROM memory WHERE namespace = $1 AND path = $2`,
        [namespace, checked],
      );
      const row = rows[0];
      if (row === undefined) throw notFound(checked, "list the memories to see what does.");
      return {
        content: exactText(row.content),
        hash: row.content_sha256,
        version: Number(row.version),
      } satisfies MemoryContent;
    },

    async write(name, content, writeOptions: MemoryWriteOptions = {}) {
      const checked = normalizeMemoryName(name);
      checkWriteOptions(writeOptions);
      // A secret scan that ran only in part lets the write go ahead, and the result says so.
      const warnings = await checkMemoryContent(checked, content, shared.limits);
      const reported = warnings.length === 0 ? {} : { warnings };
      if (checked === MEMORY_INDEX_NAME) return { ...(await writeIndex(content, writeOptions)), ...reported };
      const hash = hashContent(content);
      const writeId = writeOptions.writeId ?? `auto:${randomUUID()}`;
      const put = (condition: HeadCondition) =>
        writeStatement(condition, {
          name: checked,
          content,
          hash,
          author: writeOptions.author ?? actor,
          reason: writeOptions.reason,
          writeId,
        });
      const expected = writeOptions.expectedHash;
      for (let attempt = 0; attempt < RACE_ROUNDS; attempt++) {
        let written: number | undefined;
        try {
          if (expected === null) written = await put("insert");
          else if (expected !== undefined) {
            // A conditional UPDATE: the row lock orders racing writers, and the loser's condition fails.
            if (expected !== hash) written = await put({ expected });
          } else written = (await put({ unless: hash })) ?? (await put("insert"));
        } catch (error) {
          // A delete of the memory committed while this write counted its versions: nothing was written, and
          // the next round counts its tombstone (or finds the head another writer created meanwhile).
          if (isVersionTaken(error)) continue;
          // Another call with this write id committed first: fall through to its outcome below.
          if (!isWriteIdTaken(error)) throw error;
        }
        if (written !== undefined) return { hash, ...reported };
        // Not written: a retry of a write that committed (this write id), the content already there, or a conflict.
        const { first, head } = await outcomeOf(checked, writeId);
        if (first !== undefined)
          return {
            hash: replayWrite(writeId, first, { name: checked, operation: "write", hash }).hash ?? hash,
            ...reported,
          };
        checkExpectedHash(checked, expected, asHead(head));
        // The head is what this write wanted (equal content): nothing to change, no new version.
        if (head?.content_sha256 === hash) return { hash, ...reported };
        // The head changed between two statements of an unconditional write: try again.
      }
      throw keptChanging(checked, expected);
    },

    async delete(name, writeOptions: MemoryWriteOptions = {}) {
      const checked = normalizeMemoryName(name);
      refuseIndexName(checked, "deleted");
      checkWriteOptions(writeOptions);
      await change(
        writeOptions,
        { name: checked, operation: "delete", hash: null },
        () => undefined,
        async (transaction, writeId) => {
          const head = await lockedHead(transaction, checked, writeOptions, "nothing was deleted.");
          await transaction.query("DELETE FROM memory WHERE namespace = $1 AND path = $2", [
            namespace,
            checked,
          ]);
          // The tombstone keeps the last content, so the memory stays restorable.
          await insertVersion(transaction, {
            name: checked,
            version: head.version + 1,
            op: "delete",
            content: head.content,
            hash: null,
            author: writeOptions.author ?? actor,
            reason: writeOptions.reason,
            writeId,
          });
        },
      );
    },

    async rename(from, to, writeOptions: MemoryWriteOptions = {}) {
      const source = normalizeMemoryName(from);
      const target = normalizeMemoryName(to);
      refuseIndexName(source, "renamed");
      refuseIndexName(target, "overwritten by a rename");
      checkWriteOptions(writeOptions);
      return change(
        writeOptions,
        { name: target, operation: "rename-to" },
        (first) => ({ hash: first.hash ?? "" }),
        async (transaction, writeId) => {
          const head = await lockedHead(transaction, source, writeOptions, "nothing was renamed.");
          const author = writeOptions.author ?? actor;
          const version = await insertHead(transaction, target, head.content, head.content_sha256, author);
          if (version === undefined) {
            const existing = await headOf(transaction, target, false);
            throw new MemoryConflictError(
              `${target} already exists; rename to another name or delete it first.`,
              {
                memoryName: target,
                expectedHash: null,
                actualHash: existing?.content_sha256 ?? null,
              },
            );
          }
          await transaction.query("DELETE FROM memory WHERE namespace = $1 AND path = $2", [
            namespace,
            source,
          ]);
          const common = { content: head.content, author, reason: writeOptions.reason };
          await insertVersion(transaction, {
            ...common,
            name: source,
            version: Number(head.version) + 1,
            op: "rename-from",
            hash: null,
            otherName: target,
            writeId: null,
          });
          await insertVersion(transaction, {
            ...common,
            name: target,
            version,
            op: "rename-to",
            hash: head.content_sha256,
            otherName: source,
            writeId,
          });
          return { hash: head.content_sha256 };
        },
      );
    },

    async list() {
      return catalog();
    },

    async catalog() {
      return catalog();
    },

    async search(query, searchOptions) {
      return prefilterMemories(await catalog(), query, searchOptions);
    },

    async loadIndex(): Promise<LoadedMemoryIndex> {
      return truncateMemoryIndex(await generatedIndex(), shared.indexLimits);
    },

    async versionedNames() {
      const { rows } = await client.query<{ path: string }>(
        "SELECT DISTINCT path FROM memory_version WHERE namespace = $1 ORDER BY path",
        [namespace],
      );
      return rows.map((row) => row.path);
    },

    async listVersions(name) {
      const checked = normalizeMemoryName(name);
      // The column, not the selected `id` (text): "10" sorts before "9".
      const { rows } = await client.query<VersionRow>(
        `SELECT ${VERSION_COLUMNS} FROM memory_version WHERE namespace = $1 AND path = $2 ORDER BY memory_version.id DESC`,
        [namespace, checked],
      );
      return rows.map(versionOf);
    },

    async readVersion(name, versionId) {
      const checked = normalizeMemoryName(name);
      return versionOf(await versionRow(client, checked, versionId, false));
    },

    restore(name, versionId, writeOptions) {
      return restoreVersion(store, name, versionId, writeOptions);
    },

    async redactVersion(name, versionId, redactOptions = {}) {
      const checked = normalizeMemoryName(name);
      return client.transaction(async (transaction) => {
        const version = versionOf(await versionRow(transaction, checked, versionId, true));
        refuseHeadRedaction(version, (await headOf(transaction, checked, true))?.content_sha256 ?? null);
        if (version.redactedAt !== undefined) return version;
        const reason = redactionReason(redactOptions, actor);
        const { rows } = await transaction.query<VersionRow>(
          `UPDATE memory_version SET content = '', redacted_at = now(), reason = $2 WHERE id = $1 RETURNING ${VERSION_COLUMNS}`,
          [versionId, reason],
        );
        return versionOf(rows[0] as VersionRow);
      });
    },

    async pruneVersions(name, pruneOptions) {
      const checked = normalizeMemoryName(name);
      const keep = checkKeep(pruneOptions?.keep);
      return client.transaction(async (transaction) => {
        const head = await headOf(transaction, checked, true);
        const { rowCount } = await transaction.query(
          `DELETE FROM memory_version WHERE namespace = $1 AND path = $2
             AND id NOT IN (SELECT id FROM memory_version WHERE namespace = $1 AND path = $2 ORDER BY id DESC LIMIT $3)
             AND version IS DISTINCT FROM $4::integer`,
          [namespace, checked, keep, head?.version ?? null],
        );
        return { removed: rowCount };
      });
    },

    watch(watchOptions = {}) {
      const namespaces = (watchOptions.namespaces ?? [namespace]).map((each) =>
        checkAllowed(each, shared.allowed),
      );
      return watchMemoryChanges(client, { ...watchOptions, namespaces });
    },

    currentCursor() {
      return currentCursor(client);
    },

    proposals() {
      return createPostgresProposalQueue(client, namespace);
    },

    dreamState() {
      return createPostgresDreamState(client, namespace, actor);
    },

    async close() {
      if (shared.owns) await client.close();
    },
  };

  return store;
}
