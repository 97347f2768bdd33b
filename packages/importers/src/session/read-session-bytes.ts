import { constants } from "node:buffer";
import type { Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import { ConfigurationError } from "@unforget/core";
import { SessionFileError } from "../shared/session-errors.ts";

/** The default `maxBytes`: larger than any session file we have seen, small enough to parse in memory. */
export const DEFAULT_MAX_SESSION_BYTES = 256 * 1024 * 1024;

/** Checks a caller's `maxBytes`: a positive integer no larger than the longest string Node can hold. */
export function checkMaxBytes(maxBytes: number | undefined): number {
  if (maxBytes === undefined) return DEFAULT_MAX_SESSION_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > constants.MAX_STRING_LENGTH) {
    throw new ConfigurationError(
      `The option maxBytes is ${String(maxBytes)}; it must be a whole number of bytes from 1 to ${constants.MAX_STRING_LENGTH} (the longest string Node can hold). Leave it unset for ${DEFAULT_MAX_SESSION_BYTES}.`,
      { setting: "maxBytes" },
    );
  }
  return maxBytes;
}

/** `stat` of a source path, with a typed error when it does not exist or cannot be looked at. */
export async function statSource(path: string): Promise<Stats> {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new SessionFileError(
        `${path} does not exist; check the path (a session file, or a Claude Code session folder).`,
        {
          path,
          kind: "not_found",
          cause: error,
        },
      );
    }
    throw new SessionFileError(`${path} cannot be read (${code ?? String(error)}); check its permissions.`, {
      path,
      kind: "unreadable",
      cause: error,
    });
  }
}

/**
 * Reads a session file as UTF-8 text without ever writing to it (it is opened read-only). Refuses, with a
 * typed error, what is not a regular file, what is larger than `maxBytes` (checked before reading), an empty
 * file and a binary one. A file that grows while it is read (a live session) is read up to the size it had
 * when opened: a line cut there is reported by the importer as a torn last line.
 */
export async function readSessionText(path: string, maxBytes: number): Promise<string> {
  // Checked before opening: opening a FIFO would wait for a writer.
  if (!(await statSource(path)).isFile()) {
    throw new SessionFileError(
      `${path} is not a regular file; pass a session file or a Claude Code session folder.`,
      {
        path,
        kind: "not_a_file",
      },
    );
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw new SessionFileError(
      `${path} cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)}); check its permissions.`,
      {
        path,
        kind: "unreadable",
        cause: error,
      },
    );
  }
  try {
    const info = await handle.stat();
    if (info.size > maxBytes) {
      throw new SessionFileError(
        `${path} is ${formatBytes(info.size)}, more than the ${formatBytes(maxBytes)} importSessionFile reads (option maxBytes); it was not read. Split the session or raise maxBytes.`,
        { path, kind: "too_large" },
      );
    }
    const buffer = Buffer.allocUnsafe(info.size);
    let filled = 0;
    while (filled < info.size) {
      const { bytesRead } = await handle.read(buffer, filled, info.size - filled, filled);
      if (bytesRead === 0) break; // the file shrank while it was read
      filled += bytesRead;
    }
    return decodeSession(path, buffer.subarray(0, filled));
  } catch (error) {
    if (error instanceof SessionFileError) throw error;
    throw new SessionFileError(
      `${path} could not be read (${error instanceof Error ? error.message : String(error)}).`,
      {
        path,
        kind: "unreadable",
        cause: error,
      },
    );
  } finally {
    await handle.close();
  }
}

/** The bytes as text: refuses empty and binary content (checked on the first 64 KiB) with a typed error. */
function decodeSession(path: string, bytes: Buffer): string {
  const head = bytes.subarray(0, 64 * 1024);
  if (bytes.findIndex((byte) => byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) === -1) {
    throw new SessionFileError(
      `${path} is empty${bytes.length > 0 ? " (only blank lines)" : ""}; there is no session in it.`,
      {
        path,
        kind: "empty",
      },
    );
  }
  const utf16 = (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff);
  let binary = utf16 || head.includes(0);
  if (!binary) {
    try {
      // A cut multi-byte character at the end of the sample is not an error: `stream` leaves it pending.
      new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: bytes.length > head.length });
    } catch {
      binary = true;
    }
  }
  if (binary) {
    throw new SessionFileError(
      `${path} is not UTF-8 text${utf16 ? " (it is UTF-16: save it as UTF-8)" : " (it holds binary data)"}; session files are JSON or JSONL.`,
      { path, kind: "binary" },
    );
  }
  return bytes.toString("utf8");
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}
