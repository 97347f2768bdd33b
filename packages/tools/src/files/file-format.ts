import { ToolCallError } from "../tool-errors.ts";

/** How a text file is stored, so that a write gives back the same bytes for the lines it did not change. */
export interface TextFormat {
  /** `latin1` stands for any 8-bit encoding that is not valid UTF-8: each byte maps to one character and back. */
  encoding: "utf8" | "utf16le" | "latin1";
  /** The file starts with a byte order mark. */
  bom: boolean;
  /** The file's dominant line ending. */
  lineEnding: "\n" | "\r\n";
}

export type DecodedFile =
  | { kind: "text"; text: string; format: TextFormat }
  | { kind: "binary"; what: string };

/** How much of the start of a file is looked at to tell text from binary (what git looks at). */
export const SNIFF_BYTES = 8_000;

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF16LE_BOM = [0xff, 0xfe];

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

/** What a binary file is, from its first bytes; undefined when they look like text. */
export function sniffBinary(head: Uint8Array): string | undefined {
  if (startsWith(head, UTF16LE_BOM)) return undefined;
  const ascii = Buffer.from(head.subarray(0, 8)).toString("latin1");
  if (ascii.startsWith("%PDF-")) return "a PDF document";
  if (ascii.startsWith("PK\u0003\u0004")) return "a zip archive (or a file in a zip-based format)";
  if (ascii.startsWith("\u007fELF")) return "an executable (ELF)";
  const sniffed = head.subarray(0, SNIFF_BYTES);
  let control = 0;
  for (const byte of sniffed) {
    if (byte === 0) return "a binary file (it contains NUL bytes)";
    // Control characters other than tab, newline, form feed, carriage return and escape (colour codes).
    if (byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 12 && byte !== 13 && byte !== 27) control++;
  }
  return control > sniffed.length / 10 ? "a binary file (it is mostly control characters)" : undefined;
}

/** The dominant line ending of `text`: CRLF when at least half of its line breaks are CRLF. */
export function detectLineEnding(text: string): "\n" | "\r\n" {
  let crlf = 0;
  let lf = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    if (index > 0 && text.charCodeAt(index - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > 0 && crlf >= lf ? "\r\n" : "\n";
}

/** Decodes a whole file: UTF-8 (with or without a BOM), UTF-16LE with a BOM, or Latin-1 for other 8-bit text. */
export function decodeFile(bytes: Uint8Array): DecodedFile {
  const binary = sniffBinary(bytes);
  if (binary !== undefined) return { kind: "binary", what: binary };
  let text: string;
  let encoding: TextFormat["encoding"];
  let bom = false;
  if (startsWith(bytes, UTF16LE_BOM)) {
    text = Buffer.from(bytes.buffer, bytes.byteOffset + 2, bytes.byteLength - 2).toString("utf16le");
    encoding = "utf16le";
    bom = true;
  } else {
    bom = startsWith(bytes, UTF8_BOM);
    const body = bom ? bytes.subarray(3) : bytes;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
      encoding = "utf8";
    } catch {
      text = Buffer.from(body).toString("latin1");
      encoding = "latin1";
    }
  }
  return { kind: "text", text, format: { encoding, bom, lineEnding: detectLineEnding(text) } };
}

/** `text` with every line break written as `lineEnding`. */
export function withLineEnding(text: string, lineEnding: "\n" | "\r\n"): string {
  const lf = text.replace(/\r\n/g, "\n");
  return lineEnding === "\n" ? lf : lf.replace(/\n/g, "\r\n");
}

/** The bytes of `text` in `format` (BOM included); refuses characters a Latin-1 file cannot hold. */
export function encodeFile(text: string, format: TextFormat, shownPath: string): Buffer {
  if (format.encoding === "latin1") {
    const unencodable = [...text].find((character) => (character.codePointAt(0) ?? 0) > 0xff);
    if (unencodable !== undefined) {
      throw new ToolCallError(
        `${shownPath} is not UTF-8 (it is read as Latin-1, one byte per character), and ${JSON.stringify(unencodable)} cannot be written in it without changing the file's encoding. Use characters from Latin-1 only, or convert the file to UTF-8 with Bash first (iconv -f latin1 -t utf-8).`,
      );
    }
    return Buffer.from(text, "latin1");
  }
  if (format.encoding === "utf16le") {
    return Buffer.concat([Buffer.from(UTF16LE_BOM), Buffer.from(text, "utf16le")]);
  }
  const body = Buffer.from(text, "utf8");
  return format.bom ? Buffer.concat([Buffer.from(UTF8_BOM), body]) : body;
}

/** Splits text into lines for display: no trailing empty line for a final newline, no `\r` at line ends. */
export function displayLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}
