import { ToolCallError } from "../tool-errors.ts";
import { FILE_TYPES } from "./file-types.ts";
import { compileGlob, compileGlobs, MAX_PATTERN_CHARS, type PathMatcher } from "./glob-pattern.ts";

/**
 * A filter on relative paths (with `/`) from ripgrep-style globs: a glob with a slash matches the path, one
 * without matches the file name anywhere; a leading `!` excludes. Several globs are separated by spaces; all
 * of them together may be `MAX_PATTERN_CHARS` long, since every path is matched against each.
 */
export function globFilter(globs: string): (relativePath: string) => boolean {
  if (globs.length > MAX_PATTERN_CHARS) {
    throw new ToolCallError(
      `Grep: glob is ${globs.length} characters long, more than the ${MAX_PATTERN_CHARS} it may have; filter with fewer patterns (or with type).`,
    );
  }
  const include: PathMatcher[] = [];
  const exclude: PathMatcher[] = [];
  for (const raw of globs.split(/\s+/).filter((glob) => glob.length > 0)) {
    const negated = raw.startsWith("!");
    const glob = negated ? raw.slice(1) : raw;
    const matcher = compileGlob(glob, { matchBase: true });
    (negated ? exclude : include).push(matcher);
  }
  return (path) =>
    (include.length === 0 || include.some((matches) => matches(path))) &&
    !exclude.some((matches) => matches(path));
}

/** A filter on relative paths for one of `FILE_TYPES`; refuses a type it does not know, listing those it does. */
export function typeFilter(type: string): (relativePath: string) => boolean {
  const globs = FILE_TYPES[type];
  if (globs === undefined) {
    throw new ToolCallError(
      `Grep: unknown file type "${type}". Known types: ${Object.keys(FILE_TYPES).join(", ")}. Or filter with glob (e.g. "*.vue").`,
    );
  }
  return compileGlobs(globs, { matchBase: true });
}
