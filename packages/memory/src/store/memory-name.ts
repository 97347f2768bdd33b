import { lstat } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { MemoryPathError } from "./memory-errors.ts";
import { isMissing } from "./store-file-errors.ts";

/** Longest memory name in UTF-8 bytes (the limit Anthropic's memory stores use for paths). */
export const MAX_MEMORY_NAME_BYTES = 1024;
/** Longest single path segment in UTF-8 bytes (what common file systems allow). */
export const MAX_MEMORY_SEGMENT_BYTES = 255;
/** Deepest nesting of folders in a memory name. */
export const MAX_MEMORY_NAME_DEPTH = 16;

// Letters, marks and digits of any script, plus a few plain ASCII marks. Everything else (look-alike dots and
// slashes such as U+FF0E, U+2215, U+2044, quotes, shell characters) is refused before it reaches the disk.
const ALLOWED_SEGMENT = /^[\p{L}\p{M}\p{N} _\-.+()@]+$/u;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
const PERCENT_ENCODED = /%[0-9a-f]{2}/i;

export interface NormalizeMemoryNameOptions {
  /** Accept a folder name (no `.md` suffix), as the memory tool's `view`, `delete` and `rename` do. */
  allowFolder?: boolean;
}

function refuse(name: string, rule: string, why: string): never {
  const shown = JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);
  throw new MemoryPathError(
    `Memory name ${shown} is refused (${rule}): ${why}. Use a relative name under the memory root such as "feedback_testing.md" or "topics/build.md".`,
    { name, rule, reason: why },
  );
}

/**
 * Checks a memory name by its text alone and returns it NFC-normalised: a relative path of plain segments
 * under the root, ending in `.md`. Throws `MemoryPathError` naming the rule that refused it. Pure: the
 * disk-level checks (symlinks, hard links) are `resolveMemoryPath`'s.
 */
export function normalizeMemoryName(input: unknown, options: NormalizeMemoryNameOptions = {}): string {
  if (typeof input !== "string") refuse(String(input), "type", "a memory name must be a string");
  if (input.length === 0) refuse(input, "empty", "the name is empty");
  if (input.includes("\u0000")) refuse(input, "nul", "it contains a NUL byte");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
  if (/[\u0001-\u001f\u007f]/.test(input)) refuse(input, "control", "it contains a control character");
  if (PERCENT_ENCODED.test(input)) {
    refuse(input, "encoded", "it contains a percent-encoded character (such as %2e or %252e)");
  }
  if (input.includes("\\")) refuse(input, "backslash", "it contains a backslash; separate folders with /");
  if (/^[a-z]:/i.test(input)) refuse(input, "drive", "it starts with a drive letter");
  if (input.startsWith("/")) refuse(input, "absolute", "it is an absolute path");
  if (input.startsWith("~")) refuse(input, "home", "it starts with ~");
  const name = input.normalize("NFC");
  const bytes = Buffer.byteLength(name, "utf8");
  if (bytes > MAX_MEMORY_NAME_BYTES) {
    refuse(name, "too-long", `it is ${bytes} bytes long; the limit is ${MAX_MEMORY_NAME_BYTES}`);
  }
  const segments = name.split("/");
  if (segments.length > MAX_MEMORY_NAME_DEPTH) {
    refuse(name, "too-deep", `it has ${segments.length} levels; the limit is ${MAX_MEMORY_NAME_DEPTH}`);
  }
  for (const segment of segments) checkSegment(name, segment);
  if (!options.allowFolder && !name.endsWith(".md")) {
    refuse(name, "extension", "memory files are markdown and their names end in .md");
  }
  return name;
}

function checkSegment(name: string, segment: string): void {
  if (segment.length === 0) refuse(name, "empty-segment", "it has an empty segment (// or a trailing /)");
  if (segment === "." || segment === "..") refuse(name, "traversal", "it has a . or .. segment");
  if (segment.startsWith(".")) {
    refuse(name, "hidden", "segments may not start with a dot (hidden names are reserved for the store)");
  }
  if (Buffer.byteLength(segment, "utf8") > MAX_MEMORY_SEGMENT_BYTES) {
    refuse(name, "too-long", `a segment is over ${MAX_MEMORY_SEGMENT_BYTES} bytes`);
  }
  if (!ALLOWED_SEGMENT.test(segment)) {
    refuse(name, "character", "it contains a character other than letters, digits, space and - _ . + ( ) @");
  }
  const compatible = segment.normalize("NFKC");
  if (count(compatible, ".") !== count(segment, ".") || compatible.includes("/")) {
    refuse(name, "lookalike", "it contains a character that stands for a dot or a slash");
  }
  if (segment.endsWith(".") || segment.endsWith(" ") || segment.startsWith(" ")) {
    refuse(name, "trailing-dot", "segments may not start with a space or end with a dot or a space");
  }
  if (WINDOWS_RESERVED.test(segment)) refuse(name, "reserved", `"${segment}" is a reserved device name`);
}

function count(text: string, character: string): number {
  let total = 0;
  for (const each of text) if (each === character) total++;
  return total;
}

/**
 * The on-disk path of a checked name under `root` (a real path, no symlinks). Refuses a name any of whose
 * existing components is a symlink, and a file with more than one hard link (its other name may be outside
 * the root). Components that do not exist yet are fine: a write creates them as real folders.
 */
export async function resolveMemoryPath(root: string, name: string): Promise<string> {
  const target = join(root, ...name.split("/"));
  const fromRoot = relative(root, target);
  if (fromRoot === "" || fromRoot.startsWith(`..${sep}`) || fromRoot === ".." || isAbsolute(fromRoot)) {
    refuse(name, "traversal", "it resolves outside the memory root");
  }
  let current = root;
  const parts = name.split("/");
  for (const [index, part] of parts.entries()) {
    current = join(current, part);
    let stats: Awaited<ReturnType<typeof lstat>>;
    try {
      stats = await lstat(current);
    } catch (error) {
      // Not there, or under a plain file (`notes/a.md` when `notes` is a file): the memory does not exist.
      if (isMissing(error)) return target;
      throw error;
    }
    if (stats.isSymbolicLink())
      refuse(name, "symlink", `"${parts.slice(0, index + 1).join("/")}" is a symlink`);
    if (index === parts.length - 1 && stats.isFile() && stats.nlink > 1) {
      refuse(name, "hardlink", "the file has other hard links, which may be outside the memory root");
    }
  }
  return target;
}
