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
export function truncateMemoryIndex(
  raw: string | Uint8Array,
  limits: MemoryIndexLimits = {},
): LoadedMemoryIndex {
  const maxLines = limits.maxLines ?? MEMORY_INDEX_MAX_LINES;
  const maxBytes = limits.maxBytes ?? MEMORY_INDEX_MAX_BYTES;
  // Work on the bytes: a 10,000-line index is counted with native newline searches and only the part that is
  // loaded is decoded.
  // Bytes may come as any Uint8Array (a Buffer is one); viewed as a Buffer, without a copy.
  const bytes = trimBytes(
    typeof raw === "string"
      ? Buffer.from(raw, "utf8")
      : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength),
  );
  let totalLines = bytes.length === 0 ? 0 : 1;
  let endOfKept = bytes.length;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) {
    if (totalLines === maxLines) endOfKept = at;
    totalLines++;
  }
  const truncatedBy: LoadedMemoryIndex["truncatedBy"] = [];
  let kept = bytes.subarray(0, endOfKept);
  if (totalLines > maxLines) truncatedBy.push("lines");
  if (kept.length > maxBytes) {
    const cut = kept.subarray(0, maxBytes).lastIndexOf(0x0a);
    kept = kept.subarray(0, Math.max(cut, 0));
    truncatedBy.push("bytes");
  }
  let text = kept.toString("utf8");
  if (truncatedBy.length > 0) {
    text +=
      `\n\n> WARNING: ${MEMORY_INDEX_NAME} has ${totalLines} lines and ${bytes.length} bytes; only the first ` +
      `${maxLines} lines / ${maxBytes} bytes were loaded. Keep each index line short (under ~${MEMORY_INDEX_MAX_LINE_CHARS} characters) and put detail in topic files.`;
  }
  return { text, totalLines, totalBytes: bytes.length, truncatedBy };
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function trimBytes(bytes: Buffer): Buffer {
  let start = 0;
  let end = bytes.length;
  while (start < end && isSpace(bytes[start])) start++;
  while (end > start && isSpace(bytes[end - 1])) end--;
  return bytes.subarray(start, end);
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
