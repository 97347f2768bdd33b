import type { BigIntStats } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { ToolContext, ToolSessionState } from "@unforget/core";
import { anchorFolder, writeFileAtomic } from "@unforget/files";
import { formatSize } from "../format-size.ts";
import { displayPath, type FileAccessOptions, resolveToolPath } from "../paths/file-access.ts";
import { checkWholeNumberOption, ToolCallError } from "../tool-errors.ts";
import { requiredString } from "../tool-input.ts";
import { decodeFile, encodeFile, type TextFormat } from "./file-format.ts";
import { openRegularFile } from "./open-regular-file.ts";
import { checkUnchangedSinceRead } from "./read-before-write.ts";
import { hashBytes, recordFileRead } from "./read-state.ts";

export interface WriteToolOptions extends FileAccessOptions {
  /** Largest existing file Write or Edit replaces (default 16 MiB): they hold the whole file in memory. */
  maxEditBytes?: number;
  /** Clock for the read state (default `Date.now`). */
  now?: () => number;
}

/** Anthropic's agent toolset caps edits at 256 KiB; an edit's result is small, so only memory limits it here. */
const DEFAULT_MAX_EDIT_BYTES = 16 * 1024 * 1024;

/** Write's and Edit's settings, checked once when the tool is created. */
export function changeSettings(options: WriteToolOptions): { maxEditBytes: number; now: () => number } {
  checkWholeNumberOption(options.maxEditBytes, "maxEditBytes");
  return { maxEditBytes: options.maxEditBytes ?? DEFAULT_MAX_EDIT_BYTES, now: options.now ?? Date.now };
}

/** A text file about to be changed by Write or Edit: its content and how it is stored. */
export interface ExistingTextFile {
  text: string;
  format: TextFormat;
  /** Permission bits, kept by the write. */
  mode: number;
}

/**
 * Loads the file at `path` for a change, after checking that the model read it in this session and that it
 * has not changed since; undefined when it does not exist. Refuses binary files and files over `maxBytes`.
 */
export async function loadForChange(
  state: ToolSessionState,
  path: string,
  shown: string,
  verb: "write" | "edit",
  maxBytes: number,
): Promise<ExistingTextFile | undefined> {
  const file = await openRegularFile(path, shown);
  if (file === undefined) return undefined;
  try {
    const size = Number(file.stats.size);
    if (size > maxBytes) {
      throw new ToolCallError(
        `${shown} is ${formatSize(size)}, more than the ${formatSize(maxBytes)} the tools ${verb} (they hold the whole file in memory). Change it with Bash instead (e.g. sed -i or a short script).`,
      );
    }
    const bytes = await file.handle.readFile();
    checkUnchangedSinceRead(state, path, { mtimeNs: file.stats.mtimeNs, size, bytes }, shown, verb);
    const decoded = decodeFile(bytes);
    if (decoded.kind === "binary") {
      throw new ToolCallError(
        `${shown} is ${decoded.what}; the tools ${verb} text files only. Use Bash for it.`,
      );
    }
    return { text: decoded.text, format: decoded.format, mode: Number(file.stats.mode) & 0o7777 };
  } finally {
    await file.handle.close();
  }
}

/**
 * Writes `bytes` atomically (a reader sees the old file or the new one, never half of either), keeping the
 * permission bits, then records the write in the read state so that the next change needs no new Read. The
 * temporary file and the rename go through the folder held open (`anchorFolder`): a folder on the path
 * swapped for a symlink after the path was checked cannot send the write elsewhere. (Missing folders are
 * created first, by path; if a swap sent those outside, the anchor's check refuses the write itself.)
 */
export async function writeForTool(
  state: ToolSessionState,
  path: string,
  bytes: Buffer,
  mode: number | undefined,
  readAt: number,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const folder = await anchorFolder(dirname(path));
  let stats: BigIntStats;
  try {
    const anchored = join(folder.path, basename(path));
    await writeFileAtomic(anchored, bytes, mode === undefined ? {} : { mode });
    stats = await stat(anchored, { bigint: true });
  } finally {
    await folder.close();
  }
  recordFileRead(
    state,
    path,
    { mtimeNs: stats.mtimeNs, size: Number(stats.size), hash: hashBytes(bytes) },
    { kind: "text", readAt, contentInContext: false },
  );
}

/** The file a Write or Edit call names: its real path, how it is shown, and its text when it exists. */
export interface ChangeTarget {
  path: string;
  shown: string;
  existing: ExistingTextFile | undefined;
}

/** Resolves and loads the call's `file_path` for a change (see `loadForChange`). */
export async function changeTarget(
  tool: string,
  input: Record<string, unknown>,
  context: ToolContext,
  options: WriteToolOptions,
  verb: "write" | "edit",
): Promise<ChangeTarget> {
  const path = await resolveToolPath(requiredString(tool, input, "file_path"), context, options, "write");
  const shown = displayPath(path, context.cwd);
  const { maxEditBytes } = changeSettings(options);
  return {
    path,
    shown,
    existing: await loadForChange(context.sessionState, path, shown, verb, maxEditBytes),
  };
}

/** Replaces an existing file's text, in the file's own format (encoding, BOM, mode), and records the write. */
export async function rewriteForTool(
  state: ToolSessionState,
  target: { path: string; shown: string; existing: ExistingTextFile },
  text: string,
  readAt: number,
): Promise<void> {
  const bytes = encodeFile(text, target.existing.format, target.shown);
  await writeForTool(state, target.path, bytes, target.existing.mode, readAt);
}
