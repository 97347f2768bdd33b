import { stat } from "node:fs/promises";
import type { ToolSessionState } from "@unforget/core";
import { writeFileAtomic } from "@unforget/files";
import { decodeFile, type TextFormat } from "./file-format.ts";
import { formatSize } from "./format-size.ts";
import { openRegularFile } from "./open-regular-file.ts";
import { checkUnchangedSinceRead } from "./read-before-write.ts";
import { hashBytes, recordFileRead } from "./read-state.ts";
import { ToolCallError } from "./tool-errors.ts";

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
 * permission bits, then records the write in the read state so that the next change needs no new Read.
 */
export async function writeForTool(
  state: ToolSessionState,
  path: string,
  bytes: Buffer,
  mode: number | undefined,
  readAt: number,
): Promise<void> {
  await writeFileAtomic(path, bytes, mode === undefined ? {} : { mode });
  const stats = await stat(path, { bigint: true });
  recordFileRead(
    state,
    path,
    { mtimeNs: stats.mtimeNs, size: Number(stats.size), hash: hashBytes(bytes) },
    { kind: "text", readAt, contentInContext: false },
  );
}
