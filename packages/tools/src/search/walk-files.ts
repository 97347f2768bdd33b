import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, sep } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { type AnchoredFolder, anchorFolder } from "@unforget/files";
import { createIgnoreRules } from "./ignore-rules.ts";

/** Folders never searched: version control data. */
const VCS_FOLDERS = new Set([".git", ".hg", ".svn", ".jj"]);
/** Folders listed at once (their listings are read in parallel, as a walker that waits on each would idle). */
const PARALLEL_FOLDERS = 16;
/**
 * The walk gives the event loop a turn after this long of matching without one, so an abort, a timer or
 * another session's work runs between two slices even in a folder of a million names.
 */
const SLICE_MS = 20;
/** Entries between two looks at the clock. */
const ENTRIES_PER_CLOCK_CHECK = 64;

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
  /** The signal aborted before the walk ended: `files` holds what was found until then. */
  aborted: boolean;
}

/**
 * The regular files under `root` (a real folder path), as ripgrep would list them: `.gitignore`d paths
 * skipped (see `createIgnoreRules`), version-control folders and `node_modules` skipped (unless the root is
 * inside one), symlinks never followed, so a walk cannot leave the root; FIFOs, sockets and devices skipped.
 * Folders are read one level at a time (no recursion, so depth costs no stack) and the matching yields to the
 * event loop every `SLICE_MS`, so an abort ends the walk within a slice whatever the tree or the patterns.
 */
/**
 * The entries of `folder`, read through the folder held open (`anchorFolder`), so a folder swapped for a
 * symlink after it was listed by its parent is not read; an unreadable folder (permissions, removed meanwhile,
 * a name too long, swapped) is skipped, as ripgrep does.
 */
async function listFolder(folder: string): Promise<{ folder: string; entries: Dirent[] }> {
  let anchored: AnchoredFolder;
  try {
    anchored = await anchorFolder(folder);
  } catch {
    return { folder, entries: [] };
  }
  try {
    return { folder, entries: await readdir(anchored.path, { withFileTypes: true }) };
  } catch {
    return { folder, entries: [] };
  } finally {
    await anchored.close();
  }
}

export async function walkFiles(root: string, options: WalkFilesOptions): Promise<WalkedFiles> {
  const rules = createIgnoreRules(root);
  const skipNodeModules = !root.split(sep).includes("node_modules");
  const prefixLength = root.endsWith(sep) ? root.length : root.length + 1;
  const files: string[] = [];
  const pending: string[] = [root];
  const signal = options.signal;
  let sliceStart = performance.now();
  let sinceClockCheck = 0;
  const aborted = () => signal?.aborted === true;

  /** True when the slice is spent (looked at every few entries): the event loop should run before going on. */
  function sliceSpent(): boolean {
    if (++sinceClockCheck < ENTRIES_PER_CLOCK_CHECK) return false;
    sinceClockCheck = 0;
    return performance.now() - sliceStart >= SLICE_MS;
  }

  function relativeOf(path: string): string {
    const relativePath = path.slice(prefixLength);
    return sep === "/" ? relativePath : relativePath.split(sep).join("/");
  }

  while (pending.length > 0 && files.length <= options.maxFiles && !aborted()) {
    const folders = pending.splice(-PARALLEL_FOLDERS);
    const listings = await Promise.all(folders.map(listFolder));
    sliceStart = performance.now();
    listing: for (const { folder, entries } of listings) {
      for (const entry of entries) {
        // Awaited only when the slice is spent: an await per entry would cost a microtask each.
        if (sliceSpent()) {
          await yieldToEventLoop();
          sliceStart = performance.now();
        }
        if (aborted()) return { files, truncated: false, aborted: true };
        const path = join(folder, entry.name);
        if (entry.isDirectory()) {
          if (VCS_FOLDERS.has(entry.name) || (skipNodeModules && entry.name === "node_modules")) continue;
          if (!rules.isIgnored(path, true)) pending.push(path);
          continue;
        }
        // Symlinks, FIFOs, sockets and devices are not searched.
        if (!entry.isFile() || rules.isIgnored(path, false)) continue;
        if (options.include !== undefined && !options.include(relativeOf(path))) continue;
        files.push(path);
        if (files.length > options.maxFiles) break listing;
      }
    }
  }
  const truncated = files.length > options.maxFiles;
  return { files: truncated ? files.slice(0, options.maxFiles) : files, truncated, aborted: aborted() };
}
