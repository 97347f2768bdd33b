import { stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import type { Tool, ToolContext } from "@unforget/core";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { displayPath, type FileAccessOptions, pathSubject, resolveToolPath } from "../paths/file-access.ts";
import { checkWholeNumberOption, ToolCallError } from "../tool-errors.ts";
import { optionalString, requiredString } from "../tool-input.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { compileGlob, splitGlobBase } from "./glob-pattern.ts";
import { walkFiles } from "./walk-files.ts";

/** Options of Glob and Grep. */
export interface SearchToolOptions extends FileAccessOptions {
  /** Results listed before "N more…" (default: Glob 100 paths, Grep 250 lines or files). */
  maxResults?: number;
  /** Files a search looks at, at most (default 200 000); a larger tree is searched in part, and says so. */
  maxFiles?: number;
}

export const DEFAULT_MAX_SEARCH_FILES = 200_000;

const DESCRIPTION = `Finds files by name with a glob pattern, e.g. "**/*.ts" or "src/**/*.test.{js,ts}".
- Returns matching paths, most recently modified first.
- Respects .gitignore; skips .git and node_modules.
- path is the folder to search (default: the working directory).
- For a search by content, use Grep.`;

/** Orders files newest first, then by path. */
export function newestFirstOrder(
  a: { path: string; mtimeMs: number },
  b: { path: string; mtimeMs: number },
): number {
  return b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** Sorts paths newest first (then by name), with their modification times read in parallel batches. */
async function newestFirst(paths: readonly string[], signal: AbortSignal): Promise<string[]> {
  const dated: { path: string; mtimeMs: number }[] = [];
  for (let start = 0; start < paths.length && !signal.aborted; start += 256) {
    const batch = paths.slice(start, start + 256);
    const times = await Promise.all(
      batch.map((path) =>
        stat(path).then(
          (stats) => stats.mtimeMs,
          () => 0,
        ),
      ),
    );
    batch.forEach((path, index) => {
      dated.push({ path, mtimeMs: times[index] ?? 0 });
    });
  }
  dated.sort(newestFirstOrder);
  return dated.map((entry) => entry.path);
}

/** Creates the Glob tool: names matched in linear time over a `.gitignore`-aware walk, capped with "N more…". */
export function createGlobTool(options: SearchToolOptions = {}): Tool {
  checkWholeNumberOption(options.maxResults, "maxResults");
  checkWholeNumberOption(options.maxFiles, "maxFiles");
  const maxResults = options.maxResults ?? 100;
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_SEARCH_FILES;
  const name = BUILTIN_TOOL_NAMES.glob;

  async function run(input: Record<string, unknown>, context: ToolContext): Promise<string> {
    const pattern = requiredString(name, input, "pattern");
    const folder = optionalString(name, input, "path");
    if (pattern.split(/[\\/]/).includes("..")) {
      throw new ToolCallError(
        `Glob: the pattern may not contain ".."; to search elsewhere, pass that folder as path (e.g. path "../other", pattern "**/*.ts").`,
      );
    }
    const { base, glob, isGlob } = splitGlobBase(pattern);
    const start = isAbsolute(pattern) ? base : join(folder ?? ".", base);
    const root = await resolveToolPath(start === "" ? "." : start, context, options, "read");
    const stats = await stat(root).catch(() => undefined);
    if (!isGlob) {
      return stats?.isFile() ? displayPath(root, context.cwd) : "No files found.";
    }
    if (stats === undefined)
      throw new ToolCallError(`Glob: ${displayPath(root, context.cwd)} does not exist.`);
    if (!stats.isDirectory())
      throw new ToolCallError(`Glob: ${displayPath(root, context.cwd)} is not a folder.`);
    const matches = compileGlob(glob);
    const walked = await walkFiles(root, { include: matches, maxFiles, signal: context.signal });
    const interrupted = "(The search was interrupted; these results are incomplete.)";
    if (walked.files.length === 0)
      return walked.aborted ? `No files found. ${interrupted}` : "No files found.";
    const sorted = await newestFirst(walked.files, context.signal);
    const lines = sorted.slice(0, maxResults).map((path) => displayPath(path, context.cwd));
    if (sorted.length > maxResults) {
      const more = sorted.length - maxResults;
      lines.push(
        `… ${more} more ${more === 1 ? "file" : "files"} (narrow the pattern or the path to see them).`,
      );
    }
    if (walked.truncated) {
      lines.push(`(The search stopped after ${maxFiles} files; narrow the path to search the rest.)`);
    }
    if (walked.aborted || context.signal.aborted) lines.push(interrupted);
    return lines.join("\n");
  }

  return defineBuiltinTool({
    name,
    description: DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "The glob pattern to match file paths against." },
        path: { type: "string", description: "The folder to search in (default: the working directory)." },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    readOnly: true,
    resultRetention: "reproducible",
    concurrencySafe: true,
    permissionSubject: (input, context) => pathSubject(input.path ?? ".", context, "read"),
    run,
  });
}
