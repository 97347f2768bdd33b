import { lstat, readlink, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { UnforgetError } from "@unforget/core";

/** Which rule refused a path (`UnsafePathError.rule`). */
export type UnsafePathRule = "nul" | "encoded" | "outside" | "loop" | "unresolvable" | "swapped";

/**
 * A path a tool was given cannot be used: it leaves the folders it is confined to (through `..`, an absolute
 * path or a symlink, the last component included), contains a NUL byte or a percent-encoded dot or slash, or
 * cannot be resolved (a symlink loop, an unreadable folder). The message names the path as it was given and
 * says where it may go instead.
 */
export class UnsafePathError extends UnforgetError {
  /** The path as it was given. */
  readonly path: string;
  readonly rule: UnsafePathRule;

  constructor(message: string, details: { path: string; rule: UnsafePathRule; cause?: unknown }) {
    super("unsafe_path", message, { cause: details.cause });
    this.path = details.path;
    this.rule = details.rule;
  }
}

/** What `confinePath` checks a path against. */
export interface ConfinePathOptions {
  /** Relative paths (and `.`) resolve against this folder (absolute). */
  base: string;
  /** The folders the path must end up in once every symlink is followed (absolute; resolved at each call). */
  roots: readonly string[];
}

/** A path that passed `confinePath`. */
export interface ConfinedPath {
  /** The path with every symlink followed, the last component included: operate on this one. */
  path: string;
  /** The entry of `roots` that contains it, as it was given. */
  root: string;
}

/** Linux's MAXSYMLINKS: more hops than this are a loop, as `realpath` itself would report. */
const MAX_SYMLINK_HOPS = 40;
const ENCODED_DOT_OR_SLASH = /%(2e|2f|5c)/i;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** True when `path` is `folder` or inside it, compared by name (both absolute, already resolved). */
export function isPathInside(folder: string, path: string): boolean {
  const fromFolder = relative(folder, path);
  return (
    fromFolder === "" ||
    (!fromFolder.startsWith(`..${sep}`) && fromFolder !== ".." && !isAbsolute(fromFolder))
  );
}

/**
 * `path` (absolute) with every symlink followed, the last component included, even when it dangles; the
 * components that do not exist yet are appended as they are, so a file about to be created resolves too.
 * Rejects with the file system's error for a loop (`ELOOP`) or an unreadable component.
 */
export async function canonicalPath(path: string): Promise<string> {
  const missing: string[] = [];
  let prefix = path;
  let hops = 0;
  for (;;) {
    try {
      const real = await realpath(prefix);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (realpathError) {
      let isLink: boolean;
      try {
        isLink = (await lstat(prefix)).isSymbolicLink();
      } catch (lstatError) {
        const code = errorCode(lstatError);
        const parent = dirname(prefix);
        if ((code !== "ENOENT" && code !== "ENOTDIR") || parent === prefix) throw lstatError;
        missing.push(basename(prefix));
        prefix = parent;
        continue;
      }
      // realpath failed on something that exists and is not a link: a loop further up, or no permission.
      if (!isLink) throw realpathError;
      if (++hops > MAX_SYMLINK_HOPS) {
        throw Object.assign(new Error("too many levels of symbolic links"), { code: "ELOOP" });
      }
      // A dangling link: follow it by hand, and carry on from where it points.
      const target = await readlink(prefix);
      prefix = resolve(await realpath(dirname(prefix)), target, ...missing.splice(0).reverse());
    }
  }
}

/**
 * Resolves a path a model gave (relative to `base`, absolute, or starting with `~/`) to the real path it
 * names, and refuses it unless that real path is inside one of `roots`: `..`, absolute paths elsewhere and
 * symlinks that lead out (a symlink as the last component too, even a dangling one) are all caught, because
 * the check runs on the path with every symlink followed, which is also the path to operate on. Refuses NUL
 * bytes and percent-encoded dots and slashes (`%2e%2e%2f`) outright. Throws `UnsafePathError`.
 *
 * A component swapped for a symlink between this check and the caller's use of the path is not caught here
 * (Node has no `openat`): callers that open the path check what they opened with `checkOpenedPath`, and
 * create files through `anchorFolder`.
 */
export async function confinePath(path: string, options: ConfinePathOptions): Promise<ConfinedPath> {
  const shown = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
  if (path.includes("\u0000")) {
    throw new UnsafePathError(`The path ${shown} contains a NUL byte; give the path without it.`, {
      path,
      rule: "nul",
    });
  }
  if (ENCODED_DOT_OR_SLASH.test(path)) {
    throw new UnsafePathError(
      `The path ${shown} contains a percent-encoded dot or slash (%2e, %2f, %5c); file paths are used as written, so write the characters themselves.`,
      { path, rule: "encoded" },
    );
  }
  const expanded = path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
  let real: string;
  try {
    real = await canonicalPath(resolve(options.base, expanded));
  } catch (error) {
    const loop = errorCode(error) === "ELOOP";
    throw new UnsafePathError(
      loop
        ? `The path ${shown} cannot be resolved: its symbolic links form a loop (or chain more than ${MAX_SYMLINK_HOPS} deep).`
        : `The path ${shown} cannot be resolved (${errorCode(error) ?? "unreadable"}): a folder on the way cannot be read.`,
      { path, rule: loop ? "loop" : "unresolvable", cause: error },
    );
  }
  for (const root of options.roots) {
    let realRoot: string;
    try {
      realRoot = await canonicalPath(resolve(root));
    } catch {
      continue;
    }
    if (isPathInside(realRoot, real)) return { path: real, root };
  }
  const allowed = options.roots.map((root) => JSON.stringify(root)).join(", ");
  throw new UnsafePathError(
    `The path ${shown} is outside the folders this session may use (${allowed})${real === resolve(options.base, expanded) ? "" : `: it leads to ${JSON.stringify(real)} through a symbolic link`}. Use a path inside them.`,
    { path, rule: "outside" },
  );
}
