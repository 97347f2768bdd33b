import { randomUUID } from "node:crypto";
import {
  checkExpectedHash,
  checkMemoryContent,
  checkWriteOptions,
  hashContent,
  MEMORY_INDEX_NAME,
  MemoryConflictError,
  type MemoryIndexLimits,
  type MemoryWriteOptions,
  type MemoryWriteResult,
  memoryIndexPreamble,
  normalizeMemoryName,
  refuseIndexName,
  replayWrite,
  type SecretScanner,
} from "@unforget/memory";
import type { SqlClient, SqlQueryable } from "@unforget/postgres";
import {
  asHead,
  generatedIndex,
  type HeadCondition,
  headOf,
  insertHead,
  insertVersion,
  isVersionTaken,
  isWriteIdTaken,
  lockedHead,
  type MemorySqlScope,
  outcomeOf,
  recall,
  writeStatement,
} from "./memory-sql.ts";

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

/** What every namespace of an open store shares: the client, the allowed namespaces, the actor, the limits. */
export interface Shared {
  client: SqlClient;
  allowed: ReadonlySet<string>;
  actor: string;
  limits: { maxFileBytes: number; secretScanner: SecretScanner | undefined };
  indexLimits: MemoryIndexLimits | undefined;
  owns: boolean;
}

/** One namespace of an open store: the statements' scope, and what every namespace of the store shares. */
export interface NamespaceStore extends MemorySqlScope {
  readonly shared: Shared;
}

/**
 * Runs one change as a transaction, with a write id always (the caller's or a new one), so that the client's
 * retry after a lost COMMIT reply and a second caller racing with the same id both get the first outcome.
 */
async function change<T>(
  scope: NamespaceStore,
  writeOptions: MemoryWriteOptions,
  attempt: { name: string; operation: string; hash?: string | null },
  replay: (first: { hash: string | null }) => T,
  work: (transaction: SqlQueryable, writeId: string) => Promise<T>,
): Promise<T> {
  const { client } = scope;
  const writeId = writeOptions.writeId ?? `auto:${randomUUID()}`;
  // Wrapped, so that a replayed `undefined` (a delete's outcome) differs from "never ran".
  const replayed = async (database: SqlQueryable): Promise<{ outcome: T } | undefined> => {
    const first = await recall(scope, database, writeId);
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
}

/** A write of MEMORY.md: its preamble, under a lock of the namespace's index row. */
function writeIndex(scope: NamespaceStore, content: string, writeOptions: MemoryWriteOptions) {
  const { client, namespace } = scope;
  return client.transaction(async (transaction) => {
    await transaction.query(
      "INSERT INTO memory_index (namespace, preamble) VALUES ($1, $2) ON CONFLICT (namespace) DO NOTHING",
      [namespace, memoryIndexPreamble(undefined)],
    );
    await transaction.query("SELECT 1 FROM memory_index WHERE namespace = $1 FOR UPDATE", [namespace]);
    const current = await generatedIndex(scope, transaction);
    checkExpectedHash(MEMORY_INDEX_NAME, writeOptions.expectedHash, { hash: hashContent(current) });
    await transaction.query(
      "UPDATE memory_index SET preamble = $2, changed_at = now() WHERE namespace = $1",
      [namespace, memoryIndexPreamble(content)],
    );
    return { hash: hashContent(await generatedIndex(scope, transaction)) };
  });
}

/** `MemoryStore.write`: one statement per round (compare-and-swap in SQL), then what became of a write that wrote nothing. */
export async function writeMemory(
  scope: NamespaceStore,
  name: string,
  content: string,
  writeOptions: MemoryWriteOptions,
): Promise<MemoryWriteResult> {
  const { shared, actor } = scope;
  const checked = normalizeMemoryName(name);
  checkWriteOptions(writeOptions);
  // A secret scan that ran only in part lets the write go ahead, and the result says so.
  const warnings = await checkMemoryContent(checked, content, shared.limits);
  const reported = warnings.length === 0 ? {} : { warnings };
  if (checked === MEMORY_INDEX_NAME)
    return { ...(await writeIndex(scope, content, writeOptions)), ...reported };
  const hash = hashContent(content);
  const writeId = writeOptions.writeId ?? `auto:${randomUUID()}`;
  const put = (condition: HeadCondition) =>
    writeStatement(scope, condition, {
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
    const { first, head } = await outcomeOf(scope, checked, writeId);
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
}

/** `MemoryStore.delete`: the head removed, a tombstone version keeping the last content. */
export async function deleteMemory(
  scope: NamespaceStore,
  name: string,
  writeOptions: MemoryWriteOptions,
): Promise<void> {
  const { namespace, actor } = scope;
  const checked = normalizeMemoryName(name);
  refuseIndexName(checked, "deleted");
  checkWriteOptions(writeOptions);
  await change(
    scope,
    writeOptions,
    { name: checked, operation: "delete", hash: null },
    () => undefined,
    async (transaction, writeId) => {
      const head = await lockedHead(scope, transaction, checked, writeOptions, "nothing was deleted.");
      await transaction.query("DELETE FROM memory WHERE namespace = $1 AND path = $2", [namespace, checked]);
      // The tombstone keeps the last content, so the memory stays restorable.
      await insertVersion(scope, transaction, {
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
}

/** `MemoryStore.rename`: a new head (never over an existing one), the old removed, a version on each name. */
export async function renameMemory(
  scope: NamespaceStore,
  from: string,
  to: string,
  writeOptions: MemoryWriteOptions,
): Promise<MemoryWriteResult> {
  const { namespace, actor } = scope;
  const source = normalizeMemoryName(from);
  const target = normalizeMemoryName(to);
  refuseIndexName(source, "renamed");
  refuseIndexName(target, "overwritten by a rename");
  checkWriteOptions(writeOptions);
  return change(
    scope,
    writeOptions,
    { name: target, operation: "rename-to" },
    (first) => ({ hash: first.hash ?? "" }),
    async (transaction, writeId) => {
      const head = await lockedHead(scope, transaction, source, writeOptions, "nothing was renamed.");
      const author = writeOptions.author ?? actor;
      const version = await insertHead(scope, transaction, target, head.content, head.content_sha256, author);
      if (version === undefined) {
        const existing = await headOf(scope, transaction, target, false);
        throw new MemoryConflictError(
          `${target} already exists; rename to another name or delete it first.`,
          {
            memoryName: target,
            expectedHash: null,
            actualHash: existing?.content_sha256 ?? null,
          },
        );
      }
      await transaction.query("DELETE FROM memory WHERE namespace = $1 AND path = $2", [namespace, source]);
      const common = { content: head.content, author, reason: writeOptions.reason };
      await insertVersion(scope, transaction, {
        ...common,
        name: source,
        version: Number(head.version) + 1,
        op: "rename-from",
        hash: null,
        otherName: target,
        writeId: null,
      });
      await insertVersion(scope, transaction, {
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
}
