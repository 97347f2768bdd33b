import type { MemoryEntry, MemoryVersion, MemoryVersionOperation } from "@unforget/memory";
import { describeMemory } from "@unforget/memory";

/** A `memory` row as the store selects it for the catalog. */
export interface MemoryRow {
  path: string;
  content_sha256: string;
  size: number;
  changed_ms: number;
  entry: StoredEntry;
}

/** What a catalog entry keeps in the `entry` column: everything derived from the content. */
type StoredEntry = Omit<MemoryEntry, "name" | "hash" | "size" | "changedAtMs" | "supersededBy">;

/** Each lone surrogate (in a `u` regex a well-formed pair is one code point, so only an unpaired half matches). */
const LONE_SURROGATES = /\p{Cs}/gu;

/** The `entry` column of a memory: its frontmatter summary and search terms, derived once at write time. */
export function storedEntry(name: string, content: string): string {
  const {
    name: _name,
    hash: _hash,
    size: _size,
    changedAtMs: _changed,
    supersededBy: _by,
    ...rest
  } = describeMemory(name, content, { size: 0, changedAtMs: 0 });
  // YAML escapes (a "\udc00" in the frontmatter) can decode to a lone surrogate, which JSON in the database
  // refuses: the derived entry is for search and display, so such a character becomes U+FFFD there.
  return JSON.stringify(rest, (_key, value: unknown) =>
    typeof value === "string" ? value.replace(LONE_SURROGATES, "\uFFFD") : value,
  );
}

/** A catalog entry from its row (supersession is linked over the whole catalog afterwards). */
export function entryOf(row: MemoryRow): MemoryEntry {
  const stored = row.entry;
  return {
    name: row.path,
    hash: row.content_sha256,
    size: Number(row.size),
    changedAtMs: Number(row.changed_ms),
    title: stored.title,
    description: stored.description,
    type: stored.type ?? undefined,
    created: stored.created ?? undefined,
    updated: stored.updated ?? undefined,
    decay: stored.decay,
    relevance: stored.relevance,
    supersedes: stored.supersedes ?? [],
    supersededBy: undefined,
    problem: stored.problem ?? undefined,
    terms: stored.terms ?? "",
  };
}

/** A `memory_version` row as the store selects it. */
export interface VersionRow {
  id: string;
  path: string;
  op: MemoryVersionOperation;
  content: string;
  content_sha256: string | null;
  actor: string;
  author: string;
  reason: string | null;
  other_path: string | null;
  write_id: string | null;
  version: number;
  created_at: Date | string;
  redacted_at: Date | string | null;
}

/**
 * A text column selected so that it reads back exactly, with `exactText`. PGlite's wire reader decodes each
 * value with a TextDecoder that drops a leading U+FEFF (the Encoding Standard's default for UTF-8), so a
 * memory that starts with a byte-order mark would come back without it: the value is selected behind one
 * character, which `exactText` takes off again. The same SQL runs on a server, where it costs one byte.
 */
export function textColumn(column: string, alias = column.replace(/^.*\./, "")): string {
  return `'.' || ${column} AS ${alias}`;
}

/** A value selected with `textColumn`, as it is stored. */
export function exactText<Value extends string | null>(value: Value): Value {
  return (value === null ? null : value.slice(1)) as Value;
}

export const VERSION_COLUMNS = `id::text AS id, path, op, ${textColumn("content")}, content_sha256, actor, ${textColumn("author")}, ${textColumn("reason")}, other_path, write_id, version, created_at, redacted_at`;

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString();

export function versionOf(row: VersionRow): MemoryVersion {
  return {
    id: row.id,
    name: row.path,
    operation: row.op,
    at: iso(row.created_at),
    author: exactText(row.author),
    hash: row.content_sha256,
    content: exactText(row.content),
    version: Number(row.version),
    actor: row.actor,
    ...(row.other_path === null ? {} : { otherName: row.other_path }),
    ...(row.reason === null ? {} : { reason: exactText(row.reason) }),
    ...(row.write_id === null ? {} : { writeId: row.write_id }),
    ...(row.redacted_at === null ? {} : { redactedAt: iso(row.redacted_at) }),
  };
}
