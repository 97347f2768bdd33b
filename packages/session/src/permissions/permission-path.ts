import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { compileGitignore } from "@unforget/tools";

/** Where rule patterns and the working directories are resolved. */
export interface PathContext {
  /** The session's working directory: `path` and `./path` patterns are relative to it. */
  readonly cwd: string;
  /** `~/path` patterns are relative to it. */
  readonly homeDir?: string;
}

/** `path` inside `root` (or `root` itself), as a relative path; undefined outside. */
function inside(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  if (rel === "") return "";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

/**
 * Whether `path` (absolute) matches a Read/Edit rule's pattern, with gitignore semantics (`*`, `**`, a pattern
 * without a slash matches at any depth, a folder's pattern covers what is inside it; tools' linear-time matcher) and Claude Code's four anchors: `//abs` from the filesystem root,
 * `~/path` from the home directory, `/path` from the rule's `root` (the settings file's project), and `path` or
 * `./path` from the working directory.
 */
export function pathMatches(pattern: string, path: string, root: string, context: PathContext): boolean {
  let base: string;
  let gitignorePattern: string;
  if (pattern.startsWith("//")) {
    base = "/";
    gitignorePattern = pattern.slice(1);
  } else if (pattern === "~" || pattern.startsWith("~/")) {
    base = context.homeDir ?? homedir();
    gitignorePattern = pattern === "~" ? "/**" : pattern.slice(1);
  } else if (pattern.startsWith("/")) {
    base = root;
    gitignorePattern = pattern;
  } else if (pattern.startsWith("./")) {
    base = context.cwd;
    gitignorePattern = pattern.slice(1);
  } else {
    base = context.cwd;
    gitignorePattern = pattern;
  }
  const rel = inside(resolve(base), path);
  if (rel === undefined) return false;
  if (rel === "") return gitignorePattern === "/**" || gitignorePattern === "**";
  const rules = compileGitignore(gitignorePattern);
  if (rules === undefined) return false;
  // As in git, a path inside a folder the pattern matches is matched too: each folder on the way, then the path.
  const segments = rel.split("/");
  for (let count = 1; count <= segments.length; count++) {
    const isFolder = count < segments.length;
    if (rules.decide(segments.slice(0, count).join("/"), isFolder) === "ignored") return true;
  }
  return false;
}

/** True when `path` is one of `directories` or inside one. */
export function isInsideDirectories(path: string, directories: readonly string[]): boolean {
  return directories.some((directory) => inside(directory, path) !== undefined);
}

/**
 * The path a call names, as written (resolved against the working directory), and the path it really reaches
 * once symlinks are followed (of the nearest existing ancestor, for a file not written yet). Rules are checked
 * against both: a deny or ask rule that matches either applies; an allow rule must match both.
 */
export async function resolvePathForPermission(path: string, cwd: string): Promise<string[]> {
  const written = resolve(cwd, path);
  let existing = written;
  let rest = "";
  for (;;) {
    try {
      const real = await realpath(existing);
      const reached = rest === "" ? real : resolve(real, rest);
      return reached === written ? [written] : [written, reached];
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return [written];
      rest = rest === "" ? relative(parent, existing) : `${relative(parent, existing)}${sep}${rest}`;
      existing = parent;
    }
  }
}

/** A directory pattern to offer the user for a path they approve: the path's folder, relative when it can be. */
export function suggestPathPattern(path: string, context: PathContext): string {
  const folder = dirname(path);
  const rel = inside(resolve(context.cwd), folder);
  if (rel === "") return "./**";
  if (rel !== undefined) return `./${rel}/**`;
  return `/${folder}/**`;
}
