import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import type { Tool, ToolContext } from "@unforget/core";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { formatSize } from "../format-size.ts";
import { displayPath, pathSubject, resolveToolPath } from "../paths/file-access.ts";
import { checkWholeNumberOption, ToolCallError } from "../tool-errors.ts";
import { optionalBoolean, optionalInteger, optionalString, requiredString } from "../tool-input.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { DEFAULT_MAX_SEARCH_FILES, newestFirstOrder, type SearchToolOptions } from "./glob-tool.ts";
import { createGrepPool, type GrepPool, type GrepRun } from "./grep-runner.ts";
import type { GrepFileResult } from "./grep-scan.ts";
import { globFilter, typeFilter } from "./path-filter.ts";
import { walkFiles } from "./walk-files.ts";

export interface GrepToolOptions extends SearchToolOptions {
  /** A search still running after this long is stopped and returns what it found (default 60 000 ms). */
  timeoutMs?: number;
  /** Files larger than this are not searched (default 16 MiB); the result says how many were skipped. */
  maxFileBytes?: number;
}

const DEFAULTS = {
  maxResults: 250,
  timeoutMs: 60_000,
  maxFileBytes: 16 * 1024 * 1024,
  maxLineChars: 500,
};

const MODES = ["content", "files_with_matches", "count"] as const;
type Mode = (typeof MODES)[number];

function isMode(value: string): value is Mode {
  return (MODES as readonly string[]).includes(value);
}

const DESCRIPTION = `Searches file contents with a regular expression (JavaScript syntax, close to ripgrep's).
- output_mode: "files_with_matches" (default) lists the files, newest first; "content" shows the matching lines; "count" counts them per file.
- Filter files with glob (e.g. "*.ts", "src/**/*.{ts,tsx}", "!*.test.ts") or type (e.g. "ts", "py", "rust").
- In content mode: -n line numbers (default true), -A/-B/-C context lines, -i ignores case.
- multiline: true lets a match span lines ("." matches newlines too).
- Respects .gitignore; skips binary files, .git and node_modules. head_limit and offset page through long results.
- Use Grep rather than grep or rg in Bash.`;

/** ripgrep's leading inline flags, `(?i)` and the like, which JavaScript does not take. */
const INLINE_FLAGS = /^\(\?([imsx]+)\)/;

function compilePattern(pattern: string, caseInsensitive: boolean): { source: string; flags: string } {
  let source = pattern;
  let flags = caseInsensitive ? "i" : "";
  const inline = INLINE_FLAGS.exec(source);
  if (inline !== null) {
    source = source.slice(inline[0].length);
    if (inline[1]?.includes("i") && !flags.includes("i")) flags += "i";
  }
  try {
    new RegExp(source, flags);
    return { source, flags };
  } catch (plain) {
    try {
      // \p{…} and other Unicode escapes need the u flag.
      new RegExp(source, `${flags}u`);
      return { source, flags: `${flags}u` };
    } catch {
      throw new ToolCallError(
        `Grep: the pattern is not a valid regular expression (${(plain as Error).message}). Escape special characters such as ( [ { . * + ? with a backslash to match them literally.`,
      );
    }
  }
}

interface Page {
  offset: number;
  limit: number;
}

function paged<T>(items: readonly T[], page: Page): T[] {
  return items.slice(page.offset, page.offset + page.limit);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function moreNote(total: number, page: Page, noun: string): string | undefined {
  const after = total - page.offset - page.limit;
  if (after <= 0) return undefined;
  return `… ${plural(after, `more ${noun}`)} (pass offset ${page.offset + page.limit} to see them, or narrow the pattern, path or glob).`;
}

function formatContent(
  results: readonly GrepFileResult[],
  cwd: string,
  options: { lineNumbers: boolean; context: boolean; page: Page },
): { lines: string[]; shown: number } {
  const entries: { file: number; line: number; text: string }[] = [];
  results.forEach((result, file) => {
    const shown = displayPath(result.path, cwd);
    for (const [line, text, isMatch] of result.lines) {
      const separator = isMatch ? ":" : "-";
      entries.push({
        file,
        line,
        text: options.lineNumbers
          ? `${shown}${separator}${line}${separator}${text}`
          : `${shown}${separator}${text}`,
      });
    }
  });
  const page = paged(entries, options.page);
  const lines: string[] = [];
  page.forEach((entry, index) => {
    const previous = page[index - 1];
    // As ripgrep does with context: "--" between groups of lines that do not follow one another.
    if (
      options.context &&
      previous !== undefined &&
      (previous.file !== entry.file || previous.line + 1 !== entry.line)
    ) {
      lines.push("--");
    }
    lines.push(entry.text);
  });
  return { lines, shown: page.length };
}

/** The Grep tool's options with the defaults filled in, and the worker pool its calls share. */
interface GrepSettings {
  options: GrepToolOptions;
  maxResults: number;
  maxFiles: number;
  timeoutMs: number;
  maxFileBytes: number;
  pool: GrepPool;
}

function resolveGrepSettings(options: GrepToolOptions): GrepSettings {
  checkWholeNumberOption(options.maxResults, "maxResults");
  checkWholeNumberOption(options.maxFiles, "maxFiles");
  checkWholeNumberOption(options.timeoutMs, "timeoutMs");
  checkWholeNumberOption(options.maxFileBytes, "maxFileBytes");
  return {
    options,
    maxResults: options.maxResults ?? DEFAULTS.maxResults,
    maxFiles: options.maxFiles ?? DEFAULT_MAX_SEARCH_FILES,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    maxFileBytes: options.maxFileBytes ?? DEFAULTS.maxFileBytes,
    pool: createGrepPool(),
  };
}

/** One Grep call's input, checked, with its pattern compiled. */
interface GrepRequest {
  folder: string;
  glob: string | undefined;
  type: string | undefined;
  mode: Mode;
  before: number;
  after: number;
  lineNumbers: boolean;
  page: Page;
  multiline: boolean;
  source: string;
  flags: string;
}

function readGrepRequest(settings: GrepSettings, input: Record<string, unknown>): GrepRequest {
  const name = BUILTIN_TOOL_NAMES.grep;
  const pattern = requiredString(name, input, "pattern");
  const folder = optionalString(name, input, "path") ?? ".";
  const glob = optionalString(name, input, "glob");
  const type = optionalString(name, input, "type");
  const mode = optionalString(name, input, "output_mode") ?? "files_with_matches";
  if (!isMode(mode)) throw new ToolCallError(`Grep: output_mode must be one of ${MODES.join(", ")}.`);
  const around = optionalInteger(name, input, "-C", { min: 0 }) ?? 0;
  const before = optionalInteger(name, input, "-B", { min: 0 }) ?? around;
  const after = optionalInteger(name, input, "-A", { min: 0 }) ?? around;
  const lineNumbers = optionalBoolean(name, input, "-n") ?? true;
  const page = {
    offset: optionalInteger(name, input, "offset", { min: 0 }) ?? 0,
    limit: optionalInteger(name, input, "head_limit", { min: 1 }) ?? settings.maxResults,
  };
  const multiline = optionalBoolean(name, input, "multiline") ?? false;
  const { source, flags } = compilePattern(pattern, optionalBoolean(name, input, "-i") ?? false);
  return { folder, glob, type, mode, before, after, lineNumbers, page, multiline, source, flags };
}

/** The files a search reads, sorted, and whether the walk stopped early. */
interface SearchFiles {
  files: string[];
  truncated: boolean;
  aborted: boolean;
}

async function listSearchFiles(
  settings: GrepSettings,
  request: GrepRequest,
  root: string,
  rootStats: Stats,
  signal: AbortSignal,
): Promise<SearchFiles> {
  // A file named explicitly is searched even when .gitignore hides it, as ripgrep does.
  if (rootStats.isFile()) return { files: [root], truncated: false, aborted: false };
  const { glob, type } = request;
  const filters = [
    glob === undefined ? undefined : globFilter(glob),
    type === undefined ? undefined : typeFilter(type),
  ];
  const include = (path: string) => filters.every((filter) => filter === undefined || filter(path));
  const walked = await walkFiles(root, { include, maxFiles: settings.maxFiles, signal });
  return { files: walked.files.sort(), truncated: walked.truncated, aborted: walked.aborted };
}

/** The notes after the results: why they may be incomplete and what was not searched. */
function searchNotes(
  settings: GrepSettings,
  search: GrepRun,
  walk: SearchFiles,
  root: { path: string; isFile: boolean },
  cwd: string,
): string[] {
  const notes: string[] = [];
  if (search.stopped === "timeout") {
    notes.push(
      `(The search was stopped after ${settings.timeoutMs / 1000} s, so these results are incomplete: narrow the path or glob, or simplify the pattern.)`,
    );
  }
  if (search.stopped === "aborted" || walk.aborted)
    notes.push("(The search was interrupted; these results are incomplete.)");
  if (search.skippedLarge > 0) {
    notes.push(`(${search.skippedLarge} files over ${formatSize(settings.maxFileBytes)} were not searched.)`);
  }
  if (root.isFile && search.skippedBinary > 0) {
    notes.push(
      `(${displayPath(root.path, cwd)} is a binary file: Grep searches text. Inspect it with Bash.)`,
    );
  }
  if (walk.truncated)
    notes.push(`(Only the first ${settings.maxFiles} files were searched; narrow the path.)`);
  return notes;
}

function sumOf(results: readonly GrepFileResult[], count: (result: GrepFileResult) => number): number {
  return results.reduce((sum, result) => sum + count(result), 0);
}

/** The results in the request's output mode, one page of them, with a note when there are more. */
function formatResults(results: readonly GrepFileResult[], request: GrepRequest, cwd: string): string[] {
  const { page } = request;
  const body: string[] = [];
  if (request.mode === "files_with_matches") {
    const sorted = [...results].sort(newestFirstOrder).map((result) => result.path);
    body.push(`Found ${plural(sorted.length, "file")}`);
    body.push(...paged(sorted, page).map((path) => displayPath(path, cwd)));
    const more = moreNote(sorted.length, page, "file");
    if (more !== undefined) body.push(more);
  } else if (request.mode === "count") {
    body.push(...paged(results, page).map((result) => `${displayPath(result.path, cwd)}:${result.matches}`));
    const more = moreNote(results.length, page, "file");
    if (more !== undefined) body.push(more);
    const total = sumOf(results, (result) => result.matches);
    body.push(`(${plural(total, "matching line")} in ${plural(results.length, "file")}.)`);
  } else {
    const { lines, shown } = formatContent(results, cwd, {
      lineNumbers: request.lineNumbers,
      context: request.before > 0 || request.after > 0,
      page,
    });
    body.push(...lines);
    const matches = sumOf(results, (result) => result.matches);
    const collected = sumOf(results, (result) => result.lines.length);
    if (shown === 0) {
      body.push(
        `(offset ${page.offset} is past the last of the ${plural(collected, "line")} found; pass a smaller offset.)`,
      );
    }
    if (collected > page.offset + page.limit) {
      body.push(
        `… more: ${plural(matches, "matching line")} in ${plural(results.length, "file")} in all (pass offset ${page.offset + shown} to see the next ones, or narrow the pattern, path or glob).`,
      );
    }
  }
  return body;
}

/** One Grep call: resolves the path, lists the files, searches them on the pool and formats what it found. */
async function runGrep(
  settings: GrepSettings,
  input: Record<string, unknown>,
  context: ToolContext,
): Promise<string> {
  const request = readGrepRequest(settings, input);
  const root = await resolveToolPath(request.folder, context, settings.options, "read");
  const rootStats = await stat(root).catch(() => undefined);
  if (rootStats === undefined)
    throw new ToolCallError(`Grep: ${displayPath(root, context.cwd)} does not exist.`);
  const walk = await listSearchFiles(settings, request, root, rootStats, context.signal);
  const { mode, page } = request;
  const search = await settings.pool.run(
    {
      source: request.source,
      flags: request.flags,
      multiline: request.multiline,
      mode,
      before: mode === "content" ? request.before : 0,
      after: mode === "content" ? request.after : 0,
      maxLineChars: DEFAULTS.maxLineChars,
      maxFileBytes: settings.maxFileBytes,
    },
    walk.files,
    // One line past the page tells whether there are more.
    { signal: context.signal, timeoutMs: settings.timeoutMs, maxLines: page.offset + page.limit + 1 },
  );
  const notes = searchNotes(settings, search, walk, { path: root, isFile: rootStats.isFile() }, context.cwd);
  if (search.results.length === 0) return ["No matches found.", ...notes].join("\n");
  return [...formatResults(search.results, request, context.cwd), ...notes].join("\n");
}

function grepInputSchema(settings: GrepSettings): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      pattern: { type: "string", description: "The regular expression to search for." },
      path: {
        type: "string",
        description: "The file or folder to search (default: the working directory).",
      },
      glob: { type: "string", description: 'Only files matching this glob (e.g. "*.js", "*.{ts,tsx}").' },
      type: { type: "string", description: 'Only files of this type (e.g. "js", "py", "rust").' },
      output_mode: {
        type: "string",
        enum: [...MODES],
        description: 'What to return: "files_with_matches" (default), "content" or "count".',
      },
      "-i": { type: "boolean", description: "Ignore case." },
      "-n": { type: "boolean", description: "Show line numbers (content mode; default true)." },
      "-A": { type: "integer", minimum: 0, description: "Lines to show after each match (content mode)." },
      "-B": { type: "integer", minimum: 0, description: "Lines to show before each match (content mode)." },
      "-C": {
        type: "integer",
        minimum: 0,
        description: "Lines to show before and after each match (content mode).",
      },
      head_limit: {
        type: "integer",
        minimum: 1,
        description: `Most lines, files or counts to return (default ${settings.maxResults}).`,
      },
      offset: { type: "integer", minimum: 0, description: "Skip this many lines, files or counts first." },
      multiline: { type: "boolean", description: 'Let matches span lines; "." matches newlines too.' },
    },
    required: ["pattern"],
    additionalProperties: false,
  };
}

/** Creates the Grep tool: a JavaScript search over a `.gitignore`-aware walk, on a worker thread. */
export function createGrepTool(options: GrepToolOptions = {}): Tool {
  const settings = resolveGrepSettings(options);
  return defineBuiltinTool({
    name: BUILTIN_TOOL_NAMES.grep,
    description: DESCRIPTION,
    inputSchema: grepInputSchema(settings),
    readOnly: true,
    resultRetention: "reproducible",
    concurrencySafe: true,
    timeoutMs: settings.timeoutMs + 10_000,
    permissionSubject: (input, context) => pathSubject(input.path ?? ".", context, "read"),
    run: (input, context) => runGrep(settings, input, context),
  });
}
