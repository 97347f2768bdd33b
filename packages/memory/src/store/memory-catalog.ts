import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { isUnforgetError } from "@unforget/core";
import MiniSearch from "minisearch";
import { hashContent } from "./content-hash.ts";
import { type MemoryType, parseMemoryFile } from "./memory-frontmatter.ts";

/** What the store knows about one memory without opening it: its frontmatter summary and search terms. */
export interface MemoryEntry {
  /** The memory's name (relative path ending in `.md`). */
  name: string;
  /** SHA-256 of the content, as `read` returns it. */
  hash: string;
  /** Size in bytes. */
  size: number;
  /** When the memory last changed, in ms since the epoch (the file's mtime in a folder; the version's time in a database). */
  changedAtMs: number;
  /** Frontmatter `name`, or the file name without `.md` for a plain note. */
  title: string;
  /** Frontmatter `description`, or the first line of a plain note. */
  description: string;
  /** Undefined for a plain note without frontmatter. */
  type: MemoryType | undefined;
  created: string | undefined;
  updated: string | undefined;
  /** False for a pinned stable fact. */
  decay: boolean;
  relevance: number;
  supersedes: string[];
  /** Set when another memory lists this one in `supersedes`. */
  supersededBy: string | undefined;
  /** Why the frontmatter could not be read; the file is listed and kept, but not indexed or retrieved. */
  problem: string | undefined;
  /** Lower-cased search terms (name, description, type, headings), space-separated. */
  terms: string;
}

const CATALOG_MAGIC = "#unforget-memory-catalog\tv2\t";
const CATALOG_FIELDS = 15;
const MAX_HEADINGS = 12;
const tokenize = MiniSearch.getDefault("tokenize") as (text: string) => string[];

/**
 * English function words: near-zero IDF in any store, and the most expensive terms to look up. Left out of
 * both the indexed terms and the queries.
 */
const STOP_WORDS = new Set(
  "a an and are as at be but by for from has have in into is it its of on or that the their then there these this to was were will with".split(
    " ",
  ),
);

/** The search terms of a text, the way the BM25 pre-filter tokenizes queries (lower-cased, no function words). */
export function searchTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const token of tokenize(text)) {
    const term = token.toLowerCase();
    if (term.length > 0 && !STOP_WORDS.has(term)) terms.add(term);
  }
  return [...terms];
}

function firstLine(body: string): string {
  for (const line of body.split("\n")) {
    const text = line.replace(/^#+\s*/, "").trim();
    if (text.length > 0) return text.length > 200 ? `${text.slice(0, 199)}…` : text;
  }
  return "";
}

/**
 * Builds the catalog entry of one memory from its content, its size in bytes and when it last changed (never
 * throws: a bad frontmatter is a `problem`). Every store builds its entries with it.
 */
export function describeMemory(
  name: string,
  content: string,
  stats: { size: number; changedAtMs: number },
): MemoryEntry {
  const base: MemoryEntry = {
    name,
    hash: hashContent(content),
    size: stats.size,
    changedAtMs: stats.changedAtMs,
    title: name.replace(/\.md$/, ""),
    description: "",
    type: undefined,
    created: undefined,
    updated: undefined,
    decay: true,
    relevance: 1,
    supersedes: [],
    supersededBy: undefined,
    problem: undefined,
    terms: "",
  };
  try {
    const { frontmatter, body } = parseMemoryFile(content, name);
    const headings = body
      .split("\n")
      .filter((line) => /^#{1,6}\s/.test(line))
      .slice(0, MAX_HEADINGS)
      .join(" ");
    if (frontmatter) {
      base.title = frontmatter.name;
      base.description = frontmatter.description;
      base.type = frontmatter.type;
      base.created = frontmatter.created;
      base.updated = frontmatter.updated;
      base.decay = frontmatter.decay !== false;
      base.relevance = frontmatter.relevance ?? 1;
      base.supersedes = frontmatter.supersedes ?? [];
    } else {
      base.description = firstLine(body);
    }
    const text = `${base.title} ${name.replace(/[/_]/g, " ")} ${base.description} ${base.type ?? ""} ${headings}`;
    base.terms = searchTerms(text).join(" ");
  } catch (error) {
    if (!isUnforgetError(error)) throw error;
    base.problem = error.message;
  }
  return base;
}

/** Marks every entry that another entry supersedes (the newest superseding memory wins). */
export function linkSupersession(entries: Map<string, MemoryEntry>): void {
  for (const entry of entries.values()) entry.supersededBy = undefined;
  for (const entry of entries.values()) {
    for (const old of entry.supersedes) {
      const target = entries.get(old);
      if (target && target.name !== entry.name) target.supersededBy = entry.name;
    }
  }
}

function clean(value: string | undefined): string {
  return (value ?? "").replace(/[\t\r\n]+/g, " ");
}

/**
 * One tab-separated line per memory, the search terms last between spaces (" a b c "), so that the
 * pre-filter can find the lines holding a term with one `indexOf` over the whole file and parse only those.
 * The header carries the number of memories (the N of BM25).
 */
export function formatCatalog(entries: Iterable<MemoryEntry>): string {
  const lines: string[] = [];
  for (const entry of entries) lines.push(formatCatalogLine(entry));
  // The generation ties the search file to the catalog it was derived from.
  const generation = randomUUID();
  return `${CATALOG_MAGIC}${lines.length}\t${generation}\n${lines.join("\n")}${lines.length > 0 ? "\n" : ""}`;
}

function headerFields(text: string, magic: string): { count: number; generation: string } | undefined {
  if (!text.startsWith(magic)) return undefined;
  const end = text.indexOf("\n");
  const [count, generation = ""] = text.slice(magic.length, end === -1 ? undefined : end).split("\t");
  const value = Number(count);
  return Number.isInteger(value) && value >= 0 ? { count: value, generation } : undefined;
}

/** The generation of a catalog or search text (`undefined` when it is neither). */
export function catalogGeneration(text: string): string | undefined {
  return (headerFields(text, CATALOG_MAGIC) ?? headerFields(text, SEARCH_MAGIC))?.generation;
}

function formatCatalogLine(entry: MemoryEntry): string {
  return [
    entry.name,
    entry.hash,
    String(entry.size),
    String(entry.changedAtMs),
    clean(entry.title),
    clean(entry.description),
    entry.type ?? "",
    clean(entry.created),
    clean(entry.updated),
    entry.decay ? "1" : "0",
    String(entry.relevance),
    entry.supersedes.map(clean).join("|"),
    entry.supersededBy ?? "",
    clean(entry.problem),
    ` ${entry.terms} `,
  ].join("\t");
}

const SEARCH_MAGIC = "#unforget-memory-search\tv1\t";

/**
 * The search file derived from a catalog text: one line per memory, ` <terms> \t<offset>` where offset is
 * where the memory's line starts in the catalog text. Scanning it for a term reads a third of the bytes of
 * the catalog; the catalog line of a hit is then read at its offset.
 */
export function formatSearchIndex(catalogText: string): string {
  const lines: string[] = [];
  let start = catalogText.indexOf("\n") + 1;
  while (start > 0 && start < catalogText.length) {
    const end = catalogText.indexOf("\n", start);
    const line = catalogText.slice(start, end === -1 ? undefined : end);
    const tab = line.lastIndexOf("\t");
    lines.push(`${line.slice(tab + 1)}\t${start}`);
    if (end === -1) break;
    start = end + 1;
  }
  const generation = catalogGeneration(catalogText) ?? "";
  return `${SEARCH_MAGIC}${lines.length}\t${generation}\n${lines.join("\n")}${lines.length > 0 ? "\n" : ""}`;
}

/** The number of memories a search text holds; `undefined` when it is not one. */
export function searchIndexCount(text: string): number | undefined {
  return headerFields(text, SEARCH_MAGIC)?.count;
}

/** The number of memories a catalog text holds, from its header; `undefined` when it is not a catalog. */
export function catalogCount(text: string): number | undefined {
  return headerFields(text, CATALOG_MAGIC)?.count;
}

/** Parses one catalog line; `undefined` when it is malformed. */
export function parseCatalogLine(line: string): MemoryEntry | undefined {
  const field = line.split("\t");
  if (field.length !== CATALOG_FIELDS) return undefined;
  return {
    name: field[0] as string,
    hash: field[1] as string,
    size: Number(field[2]),
    changedAtMs: Number(field[3]),
    title: field[4] as string,
    description: field[5] as string,
    type: (field[6] || undefined) as MemoryType | undefined,
    created: field[7] || undefined,
    updated: field[8] || undefined,
    decay: field[9] !== "0",
    relevance: Number(field[10]),
    supersedes: field[11] ? (field[11] as string).split("|") : [],
    supersededBy: field[12] || undefined,
    problem: field[13] || undefined,
    terms: (field[14] as string).trim(),
  };
}

/** Parses `formatCatalog` output; `undefined` when the text is not a catalog of this version. */
export function parseCatalog(text: string): Map<string, MemoryEntry> | undefined {
  if (catalogCount(text) === undefined) return undefined;
  const lines = text.split("\n");
  const entries = new Map<string, MemoryEntry>();
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index];
    if (!line) continue;
    const entry = parseCatalogLine(line);
    if (!entry) return undefined;
    entries.set(entry.name, entry);
  }
  return entries;
}

/** Reads a catalog file's text; `undefined` when it is missing or not a catalog (the caller rebuilds it). */
export async function readCatalogText(path: string): Promise<string | undefined> {
  try {
    const text = await readFile(path, "utf8");
    return catalogCount(text) === undefined ? undefined : text;
  } catch {
    return undefined;
  }
}

/** Reads a catalog file; `undefined` when it is missing or unreadable (the caller rebuilds it). */
export async function readCatalogFile(path: string): Promise<Map<string, MemoryEntry> | undefined> {
  const text = await readCatalogText(path);
  return text === undefined ? undefined : parseCatalog(text);
}
