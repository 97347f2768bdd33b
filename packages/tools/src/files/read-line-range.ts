import type { FileHandle } from "node:fs/promises";
import { TextDecoder } from "node:util";
import { SNIFF_BYTES, sniffBinary } from "./file-format.ts";

/** One line of a range, cut to the display limit. */
export interface RangeLine {
  text: string;
  /** Characters the line had before it was cut (equal to `text.length` when it was not). */
  length: number;
}

export interface LineRangeResult {
  lines: RangeLine[];
  /** Lines in the file; a lower bound when `totalIsExact` is false (counting stopped at `countBytes`). */
  totalLines: number;
  totalIsExact: boolean;
  /** Set when the start of the file is binary; no lines are returned then. */
  binary?: string;
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Lines `first … first + count - 1` (1-based) of an open file, read in chunks so that memory stays bounded
 * by the range (each line is kept to `maxLineChars` characters, however long it is on disk), then the rest of
 * the file is counted, up to `countBytes`, to say how many lines there are.
 */
export async function readLineRange(
  handle: FileHandle,
  range: { first: number; count: number; maxLineChars: number; countBytes: number },
): Promise<LineRangeResult> {
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const lines: RangeLine[] = [];
  const last = range.first + range.count - 1;
  let decoder: TextDecoder | undefined;
  let line = 1;
  let current: RangeLine | undefined = range.first === 1 ? { text: "", length: 0 } : undefined;
  let position = 0;
  let endedWithNewline = true;
  let sawAnything = false;

  const append = (text: string) => {
    if (current === undefined || text.length === 0) return;
    current.length += text.length;
    const room = range.maxLineChars - current.text.length;
    if (room > 0) current.text += text.slice(0, room);
  };

  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const bytes = buffer.subarray(0, bytesRead);
    if (decoder === undefined) {
      const binary = sniffBinary(bytes.subarray(0, SNIFF_BYTES));
      if (binary !== undefined) return { lines: [], totalLines: 0, totalIsExact: true, binary };
      decoder = new TextDecoder(bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : "utf-8");
    }
    position += bytesRead;
    sawAnything = true;
    const text = decoder.decode(bytes, { stream: true });
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      append(text.slice(start, newline));
      if (current !== undefined) lines.push(withoutCarriageReturn(current));
      line++;
      current = line >= range.first && line <= last ? { text: "", length: 0 } : undefined;
      start = newline + 1;
    }
    append(text.slice(start));
    endedWithNewline = start === text.length;
    if (line > last && position >= range.countBytes) {
      return { lines, totalLines: line, totalIsExact: false };
    }
  }
  if (current !== undefined && !endedWithNewline) lines.push(withoutCarriageReturn(current));
  // A final newline ends the last line rather than starting another one.
  const totalLines = !sawAnything ? 0 : endedWithNewline ? line - 1 : line;
  return { lines, totalLines, totalIsExact: true };
}

function withoutCarriageReturn(line: RangeLine): RangeLine {
  if (line.length === line.text.length && line.text.endsWith("\r")) {
    return { text: line.text.slice(0, -1), length: line.length - 1 };
  }
  return line;
}
