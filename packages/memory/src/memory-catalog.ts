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
  mtimeMs: number;
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

const CATALOG_HEADER = "#unforget-memory-catalog\tv1";
const MAX_HEADINGS = 12;
const tokenize = MiniSearch.getDefault("tokenize") as (text: string) => string[];

/** The search terms of a text, the way the BM25 pre-filter tokenizes queries. */
export function searchTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const token of tokenize(text)) {
    const term = token.toLowerCase();
    if (term.length > 0) terms.add(term);
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

/** Builds the catalog entry of one memory from its content (never throws: a bad frontmatter is a `problem`). */
export function describeMemory(
  name: string,
  content: string,
  stats: { size: number; mtimeMs: number },
): MemoryEntry {
  const base: MemoryEntry = {
    name,
    hash: hashContent(content),
    size: stats.size,
    mtimeMs: stats.mtimeMs,
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

/** One tab-separated line per memory: parsing 10,000 of them is a split, not 10,000 JSON parses. */
export function formatCatalog(entries: Iterable<MemoryEntry>): string {
  const lines = [CATALOG_HEADER];
  for (const entry of entries) {
    lines.push(
      [
        entry.name,
        entry.hash,
        String(entry.size),
        String(entry.mtimeMs),
        clean(entry.title),
        clean(entry.description),
        entry.type ?? "",
        clean(entry.created),
        clean(entry.updated),
        entry.decay ? "1" : "0",
        String(entry.relevance),
        entry.supersedes.map(clean).join("|"),
        clean(entry.problem),
        entry.terms,
      ].join("\t"),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Parses `formatCatalog` output; `undefined` when the text is not a catalog of this version. */
export function parseCatalog(text: string): Map<string, MemoryEntry> | undefined {
  const lines = text.split("\n");
  if (lines[0] !== CATALOG_HEADER) return undefined;
  const entries = new Map<string, MemoryEntry>();
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index];
    if (!line) continue;
    const field = line.split("\t");
    if (field.length !== 14) return undefined;
    const name = field[0] as string;
    entries.set(name, {
      name,
      hash: field[1] as string,
      size: Number(field[2]),
      mtimeMs: Number(field[3]),
      title: field[4] as string,
      description: field[5] as string,
      type: (field[6] || undefined) as MemoryType | undefined,
      created: field[7] || undefined,
      updated: field[8] || undefined,
      decay: field[9] !== "0",
      relevance: Number(field[10]),
      supersedes: field[11] ? (field[11] as string).split("|") : [],
      supersededBy: undefined,
      problem: field[12] || undefined,
      terms: field[13] as string,
    });
  }
  linkSupersession(entries);
  return entries;
}

/** Reads a catalog file; `undefined` when it is missing or unreadable (the caller rebuilds it). */
export async function readCatalogFile(path: string): Promise<Map<string, MemoryEntry> | undefined> {
  try {
    return parseCatalog(await readFile(path, "utf8"));
  } catch {
    return undefined;
  }
}
