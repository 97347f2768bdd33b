import { type FileHandle, open } from "node:fs/promises";

/** One read of a task's output. */
export interface OutputChunk {
  /** UTF-8 text; never ends inside a character (an incomplete one is left for the next read). */
  data: string;
  /** Byte offset to pass to the next read; `nextOffset - offset` is the byte length of `data`. */
  nextOffset: number;
  /** True once the task has ended and everything up to the end of its output was read. */
  done: boolean;
}

/** Smallest chunk a reader may ask for: one UTF-8 character is at most 4 bytes. */
export const MIN_CHUNK_BYTES = 4;

/**
 * How many of the first `length` bytes form complete UTF-8 characters: a trailing lead byte whose
 * continuation bytes have not arrived yet is cut off. Invalid bytes are kept (they decode as U+FFFD).
 */
export function completeUtf8Length(bytes: Uint8Array, length: number): number {
  let start = length - 1;
  while (start >= 0 && start > length - 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  if (start < 0) return length;
  const lead = bytes[start]!;
  const needed =
    lead < 0x80
      ? 1
      : (lead & 0xe0) === 0xc0
        ? 2
        : (lead & 0xf0) === 0xe0
          ? 3
          : (lead & 0xf8) === 0xf0
            ? 4
            : 1;
  return length - start < needed ? start : length;
}

async function openForReading(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** At most `maxBytes` of a file from `offset`; none when the file does not exist. */
export async function readFileBytes(path: string, offset: number, maxBytes: number): Promise<Uint8Array> {
  const handle = await openForReading(path);
  if (handle === undefined) return new Uint8Array(0);
  try {
    const buffer = Buffer.allocUnsafe(maxBytes);
    let filled = 0;
    // A read may return less than asked before the end of the file; fill the chunk or reach the end.
    while (filled < maxBytes) {
      const { bytesRead } = await handle.read(buffer, filled, maxBytes - filled, offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/**
 * Reads at most `maxBytes` from `offset` with `read` (committed bytes only). `ended` must say whether the
 * task had ended *before* the read: the writer has then stopped, so reaching the end means `done`.
 */
export async function readOutputChunk(
  read: (offset: number, maxBytes: number) => Promise<Uint8Array>,
  offset: number,
  maxBytes: number,
  ended: boolean,
): Promise<OutputChunk> {
  const bytes = await read(offset, maxBytes);
  const filled = bytes.length;
  const atEnd = filled < maxBytes;
  // Once the writer has stopped, a trailing incomplete character will never complete: hand it out.
  const usable = ended && atEnd ? filled : completeUtf8Length(bytes, filled);
  return {
    data: Buffer.from(bytes.buffer, bytes.byteOffset, usable).toString("utf8"),
    nextOffset: offset + usable,
    done: ended && atEnd && usable === filled,
  };
}

/** The last `maxBytes` of a file as text, starting on a character boundary; "" when it does not exist. */
export async function readOutputTail(path: string, maxBytes = 500): Promise<string> {
  const handle = await openForReading(path);
  if (handle === undefined) return "";
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.allocUnsafe(size - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    let skip = 0;
    while (start > 0 && skip < 3 && skip < bytesRead && (buffer[skip]! & 0xc0) === 0x80) skip++;
    return buffer.toString("utf8", skip, bytesRead);
  } finally {
    await handle.close();
  }
}
