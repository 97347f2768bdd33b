import picomatch from "picomatch";
import { FILE_TYPES } from "./file-types.ts";
import { ToolCallError } from "./tool-errors.ts";

/**
 * A filter on relative paths (with `/`) from ripgrep-style globs: a glob with a slash matches the path, one
 * without matches the file name anywhere; a leading `!` excludes. Several globs are separated by spaces.
 */
export function globFilter(globs: string): (relativePath: string) => boolean {
  const include: ((path: string) => boolean)[] = [];
  const exclude: ((path: string) => boolean)[] = [];
  for (const raw of globs.split(/\s+/).filter((glob) => glob.length > 0)) {
    const negated = raw.startsWith("!");
    const glob = negated ? raw.slice(1) : raw;
    const matcher = picomatch(glob, { dot: true, basename: !glob.includes("/") });
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
  return picomatch([...globs], { dot: true, basename: true });
}
