import { createHash } from "node:crypto";
import {
  checkExpectedHash,
  formatMemoryIndex,
  linkSupersession,
  MemoryArgumentError,
  type MemoryEntry,
  type MemoryHead,
  MemoryNotFoundError,
  type MemoryWriteOptions,
  memoryIndexPreamble,
} from "@unforget/memory";
import { type SqlClient, SqlError, type SqlQueryable } from "@unforget/postgres";
import {
  entryOf,
  exactText,
  type MemoryRow,
  storedEntry,
  textColumn,
  VERSION_COLUMNS,
  type VersionRow,
} from "./memory-rows.ts";

/**
 * The NOTIFY channel of a namespace's changes. LISTEN needs no privilege, so a notice must tell no role what it
 * may not read: each namespace has its own channel, named by a hash of the namespace, and the notices carry
 * nothing (no path, no version id). A role that knows a namespace's name can tell when it changes, not what
 * changed; the watch then reads the versions, which row-level security filters.
 */
export function changeChannel(namespace: string): string {
  return `unforget_memory_${createHash("sha256").update(namespace).digest("hex").slice(0, 32)}`;
}

/** When a head write applies: no head yet, the head's hash is `expected` (compare-and-swap), or differs from `unless`. */
export type HeadCondition = "insert" | { expected: string } | { unless: string };

/** A unique violation on the write id: another call with the same id committed first. */
export function isWriteIdTaken(error: unknown): boolean {
  return (
    error instanceof SqlError &&
    error.sqlState === "23505" &&
    error.constraint === "memory_version_write_id_key"
  );
}
/**
 * A unique violation on a memory's version number: the statement counted the versions before a concurrent
 * change of the same memory committed (a delete's tombstone, whose head insert it then waited for). Nothing
 * was written; the same statement run again counts that version too.
 */
export function isVersionTaken(error: unknown): boolean {
  return (
    error instanceof SqlError &&
    error.sqlState === "23505" &&
    error.constraint === "memory_version_namespace_path_version_key"
  );
}

const SHA256_SQL = "encode(sha256(convert_to($3, 'UTF8')), 'hex')";

/** A memory's head as a change checks it. */
export interface Head {
  content_sha256: string;
  version: number;
  author: string;
}

/** Team memory's statements work on one namespace of one client, as one actor, notifying one channel. */
export interface MemorySqlScope {
  readonly client: SqlClient;
  readonly namespace: string;
  readonly actor: string;
  /** The namespace's NOTIFY channel. */
  readonly channel: string;
}

/** The scope of team memory's statements for one namespace. */
export function memorySqlScope(client: SqlClient, namespace: string, actor: string): MemorySqlScope {
  return { client, namespace, actor, channel: changeChannel(namespace) };
}

/** The not-found error of `name` in the scope's namespace; `what` says what was not done. */
export function notFound({ namespace }: MemorySqlScope, name: string, what: string): MemoryNotFoundError {
  return new MemoryNotFoundError(`${name} does not exist in ${namespace}; ${what}`, { memoryName: name });
}

/** The head of `name` (locked for update when `lock`), if it exists. */
export async function headOf(
  { namespace }: MemorySqlScope,
  database: SqlQueryable,
  name: string,
  lock: boolean,
): Promise<Head | undefined> {
  const { rows } = await database.query<Head>(
    `SELECT content_sha256, version, author FROM memory WHERE namespace = $1 AND path = $2${lock ? " FOR UPDATE" : ""}`,
    [namespace, name],
  );
  const row = rows[0];
  return row === undefined ? undefined : { ...row, version: Number(row.version) };
}
/** A head as the memory rules check it. */
export function asHead(head: Head | undefined): MemoryHead | undefined {
  return head === undefined
    ? undefined
    : { hash: head.content_sha256, version: head.version, author: head.author };
}

/**
 * What became of a write that wrote nothing, in one round trip: the first outcome of its write id (when it
 * committed before: a retry), and the memory's head.
 */
export async function outcomeOf(scope: MemorySqlScope, name: string, writeId: string) {
  const { client, namespace } = scope;
  const { rows } = await client.query<{
    replay_namespace: string | null;
    replay_path: string | null;
    replay_op: string | null;
    replay_hash: string | null;
    content_sha256: string | null;
    version: number | null;
    author: string | null;
  }>(
    `SELECT w.namespace AS replay_namespace, w.path AS replay_path, w.op AS replay_op, w.content_sha256 AS replay_hash,
            h.content_sha256, h.version, h.author
     FROM (SELECT 1) AS one
     LEFT JOIN memory_version w ON w.write_id = $3
     LEFT JOIN memory h ON h.namespace = $1 AND h.path = $2`,
    [namespace, name, writeId],
  );
  const row = rows[0];
  const first =
    row?.replay_path == null
      ? undefined
      : firstOutcome(scope, writeId, {
          namespace: row.replay_namespace as string,
          path: row.replay_path,
          op: row.replay_op as string,
          content_sha256: row.replay_hash,
        });
  const head: Head | undefined =
    row?.content_sha256 == null
      ? undefined
      : { content_sha256: row.content_sha256, version: Number(row.version), author: row.author as string };
  return { first, head };
}

/** The head and content of `name`, locked, checked against `expectedHash`; not found says `what` was not done. */
export async function lockedHead(
  scope: MemorySqlScope,
  transaction: SqlQueryable,
  name: string,
  writeOptions: MemoryWriteOptions,
  what: string,
): Promise<Head & { content: string }> {
  const { namespace } = scope;
  const { rows } = await transaction.query<Head & { content: string }>(
    `SELECT ${textColumn("content")}, content_sha256, version, author FROM memory WHERE namespace = $1 AND path = $2 FOR UPDATE`,
    [namespace, name],
  );
  const row = rows[0];
  if (row === undefined) throw notFound(scope, name, what);
  const head = { ...row, content: exactText(row.content), version: Number(row.version) };
  checkExpectedHash(name, writeOptions.expectedHash, asHead(head));
  return head;
}

/** The first outcome of a write id from its version row; an id from another namespace is refused. */
function firstOutcome(
  { namespace }: MemorySqlScope,
  writeId: string,
  row: { namespace: string; path: string; op: string; content_sha256: string | null },
) {
  if (row.namespace !== namespace) {
    throw new MemoryArgumentError(
      `writeId ${JSON.stringify(writeId)} was already used in another namespace; use a new writeId for each logical change.`,
      { argument: "writeId" },
    );
  }
  return { name: row.path, operation: row.op, hash: row.content_sha256 };
}

/** The first outcome of a call with this write id, if it committed. */
export async function recall(scope: MemorySqlScope, database: SqlQueryable, writeId: string) {
  const { rows } = await database.query<{
    namespace: string;
    path: string;
    op: string;
    content_sha256: string | null;
  }>("SELECT namespace, path, op, content_sha256 FROM memory_version WHERE write_id = $1", [writeId]);
  const row = rows[0];
  return row === undefined ? undefined : firstOutcome(scope, writeId, row);
}

/** Appends a version and sends its notice (empty: a hint to read), in one statement. */
export async function insertVersion(
  { namespace, actor, channel }: MemorySqlScope,
  transaction: SqlQueryable,
  row: {
    name: string;
    version: number;
    op: string;
    content: string;
    hash: string | null;
    author: string;
    reason?: string | undefined;
    otherName?: string;
    writeId: string | null;
  },
): Promise<void> {
  await transaction.query(
    `WITH inserted AS (
       INSERT INTO memory_version (namespace, path, version, op, content, content_sha256, actor, author, reason, other_path, write_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id
     )
     SELECT pg_notify($12, '') FROM inserted`,
    [
      namespace,
      row.name,
      row.version,
      row.op,
      row.content,
      row.hash,
      actor,
      row.author,
      row.reason ?? null,
      row.otherName ?? null,
      row.writeId,
      channel,
    ],
  );
}

/** The statement that creates a head (a rename's target, a first write): no row when the name is taken. */
const INSERT_HEAD_SQL = `INSERT INTO memory (namespace, path, content, content_sha256, version, size, entry, author)
  VALUES ($1, $2, $3, ${SHA256_SQL},
    (SELECT coalesce(max(version), 0) + 1 FROM memory_version WHERE namespace = $1 AND path = $2), $4, $5::jsonb, $6)
  ON CONFLICT (namespace, path) DO NOTHING RETURNING version, content_sha256`;

/** Refuses a hash the database computed differently from ours (a database whose encoding is not UTF-8). */
function checkSqlHash(name: string, sqlHash: string, hash: string): void {
  if (sqlHash !== hash) {
    throw new MemoryArgumentError(
      `The database hashed ${name} differently (${sqlHash.slice(0, 12)}…, not ${hash.slice(0, 12)}…): its encoding is not UTF-8. Create the database with ENCODING 'UTF8'.`,
      { argument: "content" },
    );
  }
}

/** Creates the head of `name` (a rename's target) in a transaction; `undefined` when the name is taken. */
export async function insertHead(
  { namespace }: MemorySqlScope,
  transaction: SqlQueryable,
  name: string,
  content: string,
  hash: string,
  author: string,
): Promise<number | undefined> {
  const { rows } = await transaction.query<{ version: number; content_sha256: string }>(INSERT_HEAD_SQL, [
    namespace,
    name,
    content,
    Buffer.byteLength(content, "utf8"),
    storedEntry(name, content),
    author,
  ]);
  const row = rows[0];
  if (row === undefined) return undefined;
  checkSqlHash(name, row.content_sha256, hash);
  return Number(row.version);
}

/**
 * A whole write as one statement, atomic on its own and one round trip: the head under `condition` (no
 * head yet; the head's hash is `expected` — the compare-and-swap, ordered by the row's lock; or it differs
 * from `unless`), its version row, and the notice. Resolves to the new version, or `undefined` when the
 * condition did not hold and nothing was written.
 */
export async function writeStatement(
  { client, namespace, actor, channel }: MemorySqlScope,
  condition: HeadCondition,
  write: {
    name: string;
    content: string;
    hash: string;
    author: string;
    reason: string | undefined;
    writeId: string;
  },
): Promise<number | undefined> {
  const head =
    condition === "insert"
      ? INSERT_HEAD_SQL
      : `UPDATE memory SET content = $3, content_sha256 = ${SHA256_SQL}, version = version + 1, size = $4,
           entry = $5::jsonb, author = $6, changed_at = now()
         WHERE namespace = $1 AND path = $2 AND content_sha256 ${"expected" in condition ? "=" : "<>"} $11
         RETURNING version, content_sha256`;
  const { rows } = await client.query<{ version: number; content_sha256: string }>(
    `WITH head AS (${head}),
     added AS (
       INSERT INTO memory_version (namespace, path, version, op, content, content_sha256, actor, author, reason, write_id)
       SELECT $1, $2, head.version, 'write', $3, head.content_sha256, $7, $6, $8, $9 FROM head
       RETURNING id, version, content_sha256
     )
     SELECT version, content_sha256, pg_notify($10, '') FROM added`,
    [
      namespace,
      write.name,
      write.content,
      Buffer.byteLength(write.content, "utf8"),
      storedEntry(write.name, write.content),
      write.author,
      actor,
      write.reason ?? null,
      write.writeId,
      channel,
      ...(condition === "insert" ? [] : ["expected" in condition ? condition.expected : condition.unless]),
    ],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  checkSqlHash(write.name, row.content_sha256, write.hash);
  return Number(row.version);
}

/** Every entry of the namespace; without `terms` (the index needs none) the rows are a fraction of the size. */
export async function catalog(
  { client, namespace }: MemorySqlScope,
  database: SqlQueryable = client,
  withTerms = true,
): Promise<MemoryEntry[]> {
  const { rows } = await database.query<MemoryRow>(
    `SELECT path, content_sha256, size, (extract(epoch FROM changed_at) * 1000)::float8 AS changed_ms,
       ${withTerms ? "entry" : "entry - 'terms' AS entry"}
     FROM memory WHERE namespace = $1 ORDER BY path`,
    [namespace],
  );
  const entries = new Map(rows.map((row) => [row.path, entryOf(row)]));
  linkSupersession(entries);
  return [...entries.values()];
}

/** MEMORY.md as the namespace's catalog and stored preamble make it. */
export async function generatedIndex(
  scope: MemorySqlScope,
  database: SqlQueryable = scope.client,
): Promise<string> {
  const { namespace } = scope;
  const [entries, preamble] = await Promise.all([
    catalog(scope, database, false),
    database.query<{ preamble: string }>(
      `SELECT ${textColumn("preamble")} FROM memory_index WHERE namespace = $1`,
      [namespace],
    ),
  ]);
  const stored = preamble.rows[0]?.preamble;
  return formatMemoryIndex(
    memoryIndexPreamble(stored === undefined ? undefined : exactText(stored)),
    entries,
  );
}

/** One version's row (locked for update when `lock`); `MemoryNotFoundError` when there is none. */
export async function versionRow(
  { namespace }: MemorySqlScope,
  database: SqlQueryable,
  name: string,
  versionId: string,
  lock: boolean,
): Promise<VersionRow> {
  const missing = () =>
    new MemoryNotFoundError(
      `${name} has no version "${versionId}" in ${namespace}; list them with listVersions(name).`,
      {
        memoryName: name,
      },
    );
  // Checked before any I/O: ids are whole numbers.
  if (typeof versionId !== "string" || !/^[1-9][0-9]{0,18}$/.test(versionId)) throw missing();
  const { rows } = await database.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM memory_version WHERE id = $1 AND namespace = $2 AND path = $3${lock ? " FOR UPDATE" : ""}`,
    [versionId, namespace, name],
  );
  const row = rows[0];
  if (row === undefined) throw missing();
  return row;
}
