import { sep } from "node:path";
import { fdir } from "fdir";
import { createIgnoreRules } from "./ignore-rules.ts";

/** Folders never searched: version control data. */
const VCS_FOLDERS = new Set([".git", ".hg", ".svn", ".jj"]);

export interface WalkFilesOptions {
  /** Keep a file when this returns true for its path relative to the root, with `/` separators. */
  include?: (relativePath: string) => boolean;
  /** Stop once this many files are found (the result then says so). */
  maxFiles: number;
  signal?: AbortSignal;
}

export interface WalkedFiles {
  /** Absolute paths, in no particular order. */
  files: string[];
  /** More files would have matched than `maxFiles`. */
  truncated: boolean;
}

/**
 * The regular files under `root` (a real folder path), as ripgrep would list them: `.gitignore`d paths
 * skipped (see `createIgnoreRules`), version-control folders and `node_modules` skipped (unless the root is
 * inside one), symlinks never followed, so a walk cannot leave the root; FIFOs, sockets and devices skipped.
 */
export async function walkFiles(root: string, options: WalkFilesOptions): Promise<WalkedFiles> {
  const rules = createIgnoreRules(root);
  const skipNodeModules = !root.split(sep).includes("node_modules");
  const prefixLength = root.endsWith(sep) ? root.length : root.length + 1;
  const crawler = new fdir({ excludeSymlinks: true, suppressErrors: true })
    .withFullPaths()
    .withMaxFiles(options.maxFiles)
    .exclude((name, path) => {
      if (VCS_FOLDERS.has(name) || (skipNodeModules && name === "node_modules")) return true;
      return rules.isIgnored(path.endsWith(sep) ? path.slice(0, -1) : path, true);
    })
    .filter((path, isFolder) => {
      if (isFolder || rules.isIgnored(path, false)) return false;
      const relativePath = path.slice(prefixLength);
      return (
        options.include === undefined ||
        options.include(sep === "/" ? relativePath : relativePath.split(sep).join("/"))
      );
    });
  if (options.signal !== undefined) crawler.withAbortSignal(options.signal);
  const files = await crawler.crawl(root).withPromise();
  const truncated = files.length > options.maxFiles;
  return { files: truncated ? files.slice(0, options.maxFiles) : files, truncated };
}
