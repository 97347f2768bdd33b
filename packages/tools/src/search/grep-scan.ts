/** What one batch of a search asks for. */
export interface GrepScanJob {
  files: string[];
  /** The regular expression's source and flags (`i`, `u`, and `s` for multiline), without `g` or `m`. */
  source: string;
  flags: string;
  /** Matches may span lines (the whole file is matched at once; `.` matches newlines). */
  multiline: boolean;
  mode: "content" | "files_with_matches" | "count";
  /** Context lines before and after each match (content mode). */
  before: number;
  after: number;
  /** Characters kept of a line shown. */
  maxLineChars: number;
  /** Lines (matches and context) kept per file; the count of matches goes on past them. */
  maxLinesPerFile: number;
  /** Files larger than this are skipped. */
  maxFileBytes: number;
}

/** One file with matches: how many lines matched, and the lines to show (number, text, whether it matched). */
export interface GrepFileResult {
  path: string;
  /** The file's modification time when it was read (files are listed newest first). */
  mtimeMs: number;
  matches: number;
  lines: [number, string, boolean][];
}

export interface GrepScanResult {
  results: GrepFileResult[];
  skippedBinary: number;
  skippedLarge: number;
  unreadable: number;
}

/** File access for the scan: the worker passes `node:fs`, the fallback on the main thread does too. */
export interface GrepScanIo {
  /** The file's bytes and modification time, or undefined when it has more than `maxBytes`; throws when it cannot be read. */
  read(path: string, maxBytes: number): { bytes: Uint8Array; mtimeMs: number } | undefined;
}

/** The expression of a scan, compiled once per batch. */
interface LineMatcher {
  /** Finds the next candidate in the whole text. */
  finder: RegExp;
  /** Tests a candidate's line on its own. */
  tester: RegExp;
  /** Whether a candidate may have matched across a line break, so its line must be tested again. */
  canSpanLines: boolean;
  multiline: boolean;
}

function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf("\n", from); at !== -1 && at < to; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

/** Line numbers (1-based, ascending, each once) of the matching lines of `text`. */
function matchingLines(matcher: LineMatcher, text: string, firstOnly: boolean): number[] {
  const { finder, tester, canSpanLines } = matcher;
  const lines: number[] = [];
  let position = 0;
  let line = 1;
  let counted = 0;
  while (position < text.length) {
    finder.lastIndex = position;
    const match = finder.exec(text);
    if (match === null) break;
    const start = text.lastIndexOf("\n", match.index - 1) + 1;
    line += countNewlines(text, counted, start);
    counted = start;
    if (matcher.multiline) {
      const end = match.index + Math.max(0, match[0].length - 1);
      const lastLine = line + countNewlines(text, start, end);
      for (let each = line; each <= lastLine; each++) if (lines[lines.length - 1] !== each) lines.push(each);
      if (firstOnly) break;
      position = match.index + Math.max(1, match[0].length);
      continue;
    }
    let lineEnd = text.indexOf("\n", match.index);
    if (lineEnd === -1) lineEnd = text.length;
    let lineText = canSpanLines ? text.slice(start, lineEnd) : "";
    if (lineText.endsWith("\r")) lineText = lineText.slice(0, -1);
    if (!canSpanLines || tester.test(lineText)) {
      lines.push(line);
      if (firstOnly) break;
    }
    position = lineEnd + 1;
  }
  return lines;
}

/** A line to show: without its carriage return, cut at `maxLineChars`. */
function cutLine(line: string, maxLineChars: number): string {
  const plain = line.endsWith("\r") ? line.slice(0, -1) : line;
  return plain.length > maxLineChars
    ? `${plain.slice(0, maxLineChars)}… [${plain.length - maxLineChars} more characters]`
    : plain;
}

/** The matching lines with their context, up to `maxLinesPerFile` in all (content mode). */
function contentLines(job: GrepScanJob, text: string, hits: readonly number[]): GrepFileResult["lines"] {
  const lines: GrepFileResult["lines"] = [];
  const all = text.split("\n");
  if (all.length > 1 && all[all.length - 1] === "") all.pop();
  const matched = new Set(hits);
  let shownUpTo = 0;
  for (const hit of hits) {
    if (lines.length >= job.maxLinesPerFile) break;
    const from = Math.max(shownUpTo + 1, hit - job.before);
    const to = Math.min(all.length, hit + job.after);
    for (let each = from; each <= to && lines.length < job.maxLinesPerFile; each++) {
      lines.push([each, cutLine(all[each - 1] ?? "", job.maxLineChars), matched.has(each)]);
      shownUpTo = each;
    }
  }
  return lines;
}

/**
 * The functions `scanFiles` calls, sent to the worker as text beside it (see `grep-runner.ts`): each is
 * self-contained like it, and names only the others.
 */
export const SCAN_HELPERS: readonly ((...args: never[]) => unknown)[] = [
  countNewlines,
  matchingLines,
  cutLine,
  contentLines,
];

/**
 * Searches a batch of files. It runs on a worker thread (its source is sent there as text with
 * `SCAN_HELPERS`, see `grep-runner.ts`), so it is self-contained: no imports, no references outside its body
 * but those helpers, plain syntax only.
 *
 * Lines are matched one at a time, as grep does, without splitting every file into lines: the expression
 * runs over the whole text to find the next candidate, and the candidate's line is then tested on its own (a
 * candidate that only matched across a line break does not count); the scan goes on from the next line.
 */
export function scanFiles(job: GrepScanJob, io: GrepScanIo): GrepScanResult {
  const matcher: LineMatcher = {
    finder: new RegExp(job.source, `${job.flags}g${job.multiline ? "ms" : "m"}`),
    tester: new RegExp(job.source, job.flags),
    // Only an expression with one of these can match a line break (without the s flag "." cannot); for any
    // other, a candidate is a matching line as it stands, and testing its line again is skipped.
    canSpanLines: /\\[sSnrDWpPcxu0-9]|\[\^|\n/.test(job.source),
    multiline: job.multiline,
  };
  const result: GrepScanResult = { results: [], skippedBinary: 0, skippedLarge: 0, unreadable: 0 };
  const utf8 = new TextDecoder("utf-8");
  const utf16le = new TextDecoder("utf-16le");
  for (const path of job.files) {
    let file: { bytes: Uint8Array; mtimeMs: number } | undefined;
    try {
      file = io.read(path, job.maxFileBytes);
    } catch {
      result.unreadable++;
      continue;
    }
    if (file === undefined) {
      result.skippedLarge++;
      continue;
    }
    const bytes = file.bytes;
    const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe;
    // A NUL byte early in the file marks it binary, as grep and git decide.
    if (!utf16 && bytes.subarray(0, 8000).indexOf(0) !== -1) {
      result.skippedBinary++;
      continue;
    }
    const text = (utf16 ? utf16le : utf8).decode(bytes);
    let hits: number[];
    try {
      hits = matchingLines(matcher, text, job.mode === "files_with_matches");
    } catch {
      // The expression overflowed its stack on this file.
      result.unreadable++;
      continue;
    }
    if (hits.length === 0) continue;
    const lines = job.mode === "content" ? contentLines(job, text, hits) : [];
    result.results.push({ path, mtimeMs: file.mtimeMs, matches: hits.length, lines });
  }
  return result;
}
