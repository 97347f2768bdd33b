import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { compileGitignore, type GitignoreRules } from "./glob-pattern.ts";

/** Files whose rules hide paths from Glob and Grep, in every folder (ripgrep reads `.ignore` too). */
const IGNORE_FILES = [".gitignore", ".ignore"];
/**
 * Largest ignore file read; a larger one is skipped. git skips those over 100 MB; real ones are a few KiB, and
 * every rule costs a little on every path of the walk, so the bound here is lower.
 */
const MAX_IGNORE_FILE_BYTES = 256 * 1024;

interface FolderRules {
  folder: string;
  rules: GitignoreRules;
}

/** Answers whether a path under a search root is hidden by `.gitignore` rules, as git (and ripgrep) would. */
export interface IgnoreRules {
  /** True when `path` (absolute, under the root) is ignored; `isFolder` for folders. */
  isIgnored(path: string, isFolder: boolean): boolean;
}

function loadRules(folder: string, extra: readonly string[] = []): GitignoreRules | undefined {
  const texts: string[] = [];
  for (const name of [...extra, ...IGNORE_FILES]) {
    const text = readIgnoreFile(join(folder, name));
    if (text !== undefined) texts.push(text);
  }
  // Later files' rules come after earlier ones', so they win, as when git reads them in this order.
  return texts.length === 0 ? undefined : compileGitignore(texts.join("\n"));
}

/**
 * The text of an ignore file, or undefined when there is none to use: a symbolic link (git does not follow
 * them either), a FIFO or a device (the read would block or never end; `O_NONBLOCK` keeps the open from
 * waiting), or a file over `MAX_IGNORE_FILE_BYTES`.
 */
function readIgnoreFile(path: string): string | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile() || stats.size > MAX_IGNORE_FILE_BYTES) return undefined;
    const bytes = Buffer.alloc(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(descriptor, bytes, filled, bytes.length - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    return bytes.subarray(0, filled).toString("utf8");
  } catch {
    return undefined;
  } finally {
    closeSync(descriptor);
  }
}

function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}

/** The folder holding `.git` above (or at) `start`, if any. */
function findRepositoryRoot(start: string): string | undefined {
  for (let folder = start; ; folder = dirname(folder)) {
    if (existsSync(join(folder, ".git"))) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * The ignore rules that apply under `root`: the `.gitignore` and `.ignore` files of every folder from the
 * repository's top (with `.git/info/exclude`) down to each path, the deepest with an opinion winning, as in
 * git. Files are read once, when a path in their folder is first asked about. When the root itself is
 * ignored by the rules above it (the model named an ignored folder), only the rules inside it apply.
 */
export function createIgnoreRules(root: string): IgnoreRules {
  const byFolder = new Map<string, FolderRules[]>();
  const repository = findRepositoryRoot(root);
  let above: FolderRules[] = [];
  if (repository !== undefined && repository !== root) {
    const folders: string[] = [];
    for (let folder = dirname(root); ; folder = dirname(folder)) {
      folders.push(folder);
      if (folder === repository || dirname(folder) === folder) break;
    }
    for (const folder of folders) {
      const rules = loadRules(folder, folder === repository ? [join(".git", "info", "exclude")] : []);
      if (rules !== undefined) above.push({ folder, rules });
    }
    if (decide(above, root, true)) above = [];
  }
  const rootRules = loadRules(root, repository === root ? [join(".git", "info", "exclude")] : []);
  byFolder.set(root, rootRules === undefined ? above : [{ folder: root, rules: rootRules }, ...above]);

  /** The rules for entries of `folder`, deepest first. */
  function chain(folder: string): FolderRules[] {
    const known = byFolder.get(folder);
    if (known !== undefined) return known;
    const parent = dirname(folder);
    const inherited = parent === folder ? above : chain(parent);
    const rules = loadRules(folder);
    const result = rules === undefined ? inherited : [{ folder, rules }, ...inherited];
    byFolder.set(folder, result);
    return result;
  }

  return {
    isIgnored(path, isFolder) {
      return decide(chain(dirname(path)), path, isFolder);
    },
  };
}

function decide(chain: readonly FolderRules[], path: string, isFolder: boolean): boolean {
  for (const { folder, rules } of chain) {
    const relativePath = toPosix(relative(folder, path));
    if (relativePath === "" || relativePath === ".." || relativePath.startsWith("../")) continue;
    const decision = rules.decide(relativePath, isFolder);
    if (decision !== undefined) return decision === "ignored";
  }
  return false;
}
