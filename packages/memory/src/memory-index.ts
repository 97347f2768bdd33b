import type { MemoryEntry } from "./memory-catalog.ts";

/** The index file at the root of every memory dir; always loaded into the context. */
export const MEMORY_INDEX_NAME = "MEMORY.md";
/** Lines of MEMORY.md loaded at most; the rest is cut with a warning. */
export const MEMORY_INDEX_MAX_LINES = 200;
/** Bytes of MEMORY.md loaded at most (guards against very long lines), cut on a line boundary. */
export const MEMORY_INDEX_MAX_BYTES = 25_000;
/** Index lines longer than this are shortened, so one entry cannot eat the byte budget. */
export const MEMORY_INDEX_MAX_LINE_CHARS = 200;

/** Everything above this line in MEMORY.md is the user's own text and kept; everything below is generated. */
export const MEMORY_INDEX_MARKER =
  "<!-- unforget: the lines below are generated from the topic files' frontmatter; edit those files instead -->";

/** The index as it goes into the context. */
export interface LoadedMemoryIndex {
  /** The text to load (cut to the limits, with a warning appended when it was cut). */
  text: string;
  /** Lines and bytes of the whole file. */
  totalLines: number;
  totalBytes: number;
  /** Which limit cut it, if any. */
  truncatedBy: Array<"lines" | "bytes">;
}

export interface MemoryIndexLimits {
  maxLines?: number;
  maxBytes?: number;
}

/**
 * Cuts MEMORY.md to the loading limits: first to `maxLines` lines, then to `maxBytes` bytes at the last line
 * break before the limit, and appends a warning saying so (the model should keep the index short and move
 * detail into topic files). Text within both limits is returned unchanged.
 */
export function truncateMemoryIndex(raw: string, limits: MemoryIndexLimits = {}): LoadedMemoryIndex {
  const maxLines = limits.maxLines ?? MEMORY_INDEX_MAX_LINES;
  const maxBytes = limits.maxBytes ?? MEMORY_INDEX_MAX_BYTES;
  const trimmed = raw.trim();
  const lines = trimmed === "" ? [] : trimmed.split("\n");
  const totalBytes = Buffer.byteLength(trimmed, "utf8");
  const truncatedBy: LoadedMemoryIndex["truncatedBy"] = [];
  let kept = lines;
  if (kept.length > maxLines) {
    kept = kept.slice(0, maxLines);
    truncatedBy.push("lines");
  }
  let text = kept.join("\n");
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length > maxBytes) {
    const window = buffer.subarray(0, maxBytes);
    const cut = window.lastIndexOf(0x0a);
    text = cut > 0 ? window.subarray(0, cut).toString("utf8") : "";
    truncatedBy.push("bytes");
  }
  if (truncatedBy.length > 0) {
    text +=
      `\n\n> WARNING: ${MEMORY_INDEX_NAME} has ${lines.length} lines and ${totalBytes} bytes; only the first ` +
      `${maxLines} lines / ${maxBytes} bytes were loaded. Keep each index line short (under ~${MEMORY_INDEX_MAX_LINE_CHARS} characters) and put detail in topic files.`;
  }
  return { text, totalLines: lines.length, totalBytes, truncatedBy };
}

function indexLine(entry: MemoryEntry): string {
  const description = entry.description || "(no description)";
  const line = `- [${entry.title.replace(/[[\]]/g, "")}](${entry.name.replace(/ /g, "%20")}) — ${description}`;
  return line.length > MEMORY_INDEX_MAX_LINE_CHARS
    ? `${line.slice(0, MEMORY_INDEX_MAX_LINE_CHARS - 1)}…`
    : line;
}

/**
 * Orders the index so that a cut keeps what matters: pinned stable facts first, then the most recently
 * updated, then by name. Superseded memories and files whose frontmatter needs fixing are left out.
 */
export function indexOrder(entries: Iterable<MemoryEntry>): MemoryEntry[] {
  return [...entries]
    .filter((entry) => entry.problem === undefined && entry.supersededBy === undefined)
    .sort((a, b) => {
      if (a.decay !== b.decay) return a.decay ? 1 : -1;
      const byDate = (b.updated ?? b.created ?? "").localeCompare(a.updated ?? a.created ?? "");
      return byDate !== 0 ? byDate : a.name.localeCompare(b.name);
    });
}

/** Splits an existing MEMORY.md into the user's preamble (kept verbatim) and the generated part. */
export function memoryIndexPreamble(existing: string | undefined): string {
  if (existing === undefined) return "# Memory index\n";
  const at = existing.indexOf(MEMORY_INDEX_MARKER);
  return at === -1 ? existing : existing.slice(0, at);
}

/** The full MEMORY.md: the preamble, the marker and one line per indexed memory. */
export function formatMemoryIndex(preamble: string, entries: Iterable<MemoryEntry>): string {
  const lines = indexOrder(entries).map(indexLine);
  const head = preamble.endsWith("\n") || preamble === "" ? preamble : `${preamble}\n`;
  return `${head}${MEMORY_INDEX_MARKER}\n${lines.join("\n")}${lines.length > 0 ? "\n" : ""}`;
}
