import { createHash } from "node:crypto";
import type { ToolSessionState } from "@unforget/core";

/** One file the model read in this session, as it was when it was last read or written by the tools. */
export interface FileReadRecord {
  /** The file's real path (symlinks followed). */
  readonly path: string;
  /** An image is sent to the model as an image; rehydration re-reads text files only. */
  readonly kind: "text" | "image";
  /** When it was last read or written (milliseconds since the epoch, from the tools' clock). */
  readonly readAt: number;
  /** Its modification time then, in milliseconds. */
  readonly mtimeMs: number;
  /** Its size then, in bytes. */
  readonly size: number;
  /** SHA-256 of its bytes then, when the whole file was read or written (hex); undefined after a partial read. */
  readonly hash: string | undefined;
}

/** What the tools keep per file; the exported record is a view of it. */
interface FileReadEntry {
  path: string;
  kind: "text" | "image";
  readAt: number;
  mtimeNs: bigint;
  size: number;
  hash: string | undefined;
  /** The range the last Read returned (`offset`/`limit` as given; undefined for a whole read). */
  offset: number | undefined;
  limit: number | undefined;
  /** The model has this range's full content in its context: an unchanged re-read may answer with a stub. */
  contentInContext: boolean;
}

interface ReadState {
  files: Map<string, FileReadEntry>;
  /** Paths recorded since `readStateChanges` last handed them out. */
  changed: Set<string>;
}

const READ_STATE = Symbol("@unforget/tools/read-state");

function readStateOf(state: ToolSessionState): ReadState {
  let readState = state.get(READ_STATE) as ReadState | undefined;
  if (readState === undefined) {
    readState = { files: new Map(), changed: new Set() };
    state.set(READ_STATE, readState);
  }
  return readState;
}

/** The file's identity on disk, as a read or write saw it. */
export interface FileSnapshot {
  mtimeNs: bigint;
  size: number;
  /** SHA-256 of the bytes, when the whole file is at hand. */
  hash?: string | undefined;
}

export function hashBytes(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Records a Read (or a Write/Edit, with `contentInContext` false: the model knows its change, not the file). */
export function recordFileRead(
  state: ToolSessionState,
  path: string,
  snapshot: FileSnapshot,
  details: {
    kind: "text" | "image";
    readAt: number;
    offset?: number | undefined;
    limit?: number | undefined;
    contentInContext: boolean;
  },
): void {
  const { files, changed } = readStateOf(state);
  changed.add(path);
  // Re-inserting keeps the map in order of recency.
  files.delete(path);
  files.set(path, {
    path,
    kind: details.kind,
    readAt: details.readAt,
    mtimeNs: snapshot.mtimeNs,
    size: snapshot.size,
    hash: snapshot.hash,
    offset: details.offset,
    limit: details.limit,
    contentInContext: details.contentInContext,
  });
}

/** The entry of a file, if the model read it in this session. */
export function fileReadEntry(state: ToolSessionState, path: string): Readonly<FileReadEntry> | undefined {
  return readStateOf(state).files.get(path);
}

/**
 * True when an unchanged re-read of the same range may answer with a stub: the last answer for this range
 * was its full content, still in context, and the file has the same modification time and size.
 */
export function takeUnchangedReread(
  state: ToolSessionState,
  path: string,
  snapshot: FileSnapshot,
  range: { offset: number | undefined; limit: number | undefined },
): boolean {
  const entry = readStateOf(state).files.get(path);
  if (
    entry === undefined ||
    !entry.contentInContext ||
    entry.offset !== range.offset ||
    entry.limit !== range.limit ||
    entry.mtimeNs !== snapshot.mtimeNs ||
    entry.size !== snapshot.size
  ) {
    return false;
  }
  // The stub is given once: if the model asks again right after it, the earlier result is not what it wants.
  entry.contentInContext = false;
  return true;
}

/**
 * The files the model read (or wrote) in this session, most recent first. Feeds compact's recent-files
 * rehydration:
 * `createRecentFilesProvider({ recentPaths: () => readFilesOf(state).filter((file) => file.kind === "text").map((file) => file.path) })`.
 */
export function readFilesOf(state: ToolSessionState): FileReadRecord[] {
  return [...readStateOf(state).files.values()].reverse().map((entry) => ({
    path: entry.path,
    kind: entry.kind,
    readAt: entry.readAt,
    mtimeMs: Number(entry.mtimeNs / 1_000_000n),
    size: entry.size,
    hash: entry.hash,
  }));
}

/**
 * Call after a compaction (or anything else that removes earlier tool results from the context): the next
 * Read of any file returns its content again instead of the "unchanged" stub. Write and Edit keep working
 * without a new Read, since what they check (the file has not changed since it was read) still holds.
 */
export function forgetReadContents(state: ToolSessionState): void {
  for (const entry of readStateOf(state).files.values()) entry.contentInContext = false;
}

/** The key of tool-results message metadata under which the read state's changes are written. */
const READ_STATE_METADATA_KEY = "unforget.readState";

/** One file's read state as the transcript holds it (JSON: the nanosecond mtime as a decimal string). */
interface ReadStateRecord {
  path: string;
  kind: "text" | "image";
  readAt: number;
  mtimeNs: string;
  size: number;
  hash?: string;
  offset?: number;
  limit?: number;
}

/**
 * The files read or written since the last call, as metadata for the message that carries the calls' results
 * (`createMessage("user", results, { metadata })`), or undefined when none changed. Writing it into the
 * transcript is what lets a resumed session allow the edits the original would have (see `restoreReadState`):
 * the message is kept in the transcript whatever a compaction later does to the context.
 */
export function readStateChanges(state: ToolSessionState): Record<string, unknown> | undefined {
  const readState = readStateOf(state);
  if (readState.changed.size === 0) return undefined;
  const records: ReadStateRecord[] = [];
  for (const path of readState.changed) {
    const entry = readState.files.get(path);
    if (entry === undefined) continue;
    records.push({
      path: entry.path,
      kind: entry.kind,
      readAt: entry.readAt,
      mtimeNs: entry.mtimeNs.toString(),
      size: entry.size,
      ...(entry.hash === undefined ? {} : { hash: entry.hash }),
      ...(entry.offset === undefined ? {} : { offset: entry.offset }),
      ...(entry.limit === undefined ? {} : { limit: entry.limit }),
    });
  }
  readState.changed.clear();
  return records.length === 0 ? undefined : { [READ_STATE_METADATA_KEY]: records };
}

function isRecord(value: unknown): value is ReadStateRecord {
  const record = value as Partial<ReadStateRecord> | null;
  return (
    typeof record?.path === "string" &&
    (record.kind === "text" || record.kind === "image") &&
    typeof record.readAt === "number" &&
    typeof record.mtimeNs === "string" &&
    /^\d+$/.test(record.mtimeNs) &&
    typeof record.size === "number" &&
    (record.hash === undefined || typeof record.hash === "string") &&
    (record.offset === undefined || typeof record.offset === "number") &&
    (record.limit === undefined || typeof record.limit === "number")
  );
}

/**
 * Brings back what `readStateChanges` wrote, from a resumed transcript's messages (in order; a message
 * without such metadata is skipped, a malformed record too). The files count as read as they were then: an
 * edit is allowed if the file has not changed on disk since, and refused otherwise. Their content is not
 * taken to be in context (the next Read returns it, not the "unchanged" stub).
 */
export function restoreReadState(
  state: ToolSessionState,
  messages: readonly { metadata?: Record<string, unknown> }[],
): void {
  const readState = readStateOf(state);
  for (const message of messages) {
    const records = message.metadata?.[READ_STATE_METADATA_KEY];
    if (!Array.isArray(records)) continue;
    for (const record of records) {
      if (!isRecord(record)) continue;
      readState.files.delete(record.path);
      readState.files.set(record.path, {
        path: record.path,
        kind: record.kind,
        readAt: record.readAt,
        mtimeNs: BigInt(record.mtimeNs),
        size: record.size,
        hash: record.hash,
        offset: record.offset,
        limit: record.limit,
        contentInContext: false,
      });
    }
  }
}
