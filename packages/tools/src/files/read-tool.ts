import type { ImageBlock, TextBlock, Tool, ToolContext, ToolOutput } from "@unforget/core";
import { estimateTextTokens } from "@unforget/tokens";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { formatSize } from "../format-size.ts";
import {
  displayPath,
  type FileAccessOptions,
  filePathProperty,
  pathSubject,
  resolveToolPath,
} from "../paths/file-access.ts";
import { checkWholeNumberOption, ToolCallError } from "../tool-errors.ts";
import { optionalInteger, requiredString } from "../tool-input.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { decodeFile, displayLines } from "./file-format.ts";
import { type OpenedFile, openRegularFile } from "./open-regular-file.ts";
import { type RangeLine, readLineRange } from "./read-line-range.ts";
import { hashBytes, recordFileRead, takeUnchangedReread } from "./read-state.ts";

export interface ReadToolOptions extends FileAccessOptions {
  /** Largest file read whole, without `offset` or `limit` (default 256 KiB); a larger one is read in parts. */
  maxFileBytes?: number;
  /** Lines returned when the call gives no `limit` (default 2 000). */
  defaultLineLimit?: number;
  /** Characters shown of one line (default 2 000); the rest of a longer line is left out, with a note. */
  maxLineChars?: number;
  /** Most tokens one result holds (default 25 000, estimated); a longer range is cut where it says to go on. */
  maxOutputTokens?: number;
  /** Largest image sent as an image block (default 3.75 MiB: 5 MB once base64-encoded, the providers' limit). */
  maxImageBytes?: number;
  /** Clock for the read state's `readAt` (default `Date.now`). */
  now?: () => number;
}

const DEFAULTS = {
  // Claude Code's and Anthropic's agent toolset's cap for a whole-file read.
  maxFileBytes: 256 * 1024,
  // Claude Code's Read: 2 000 lines, 2 000 characters a line, 25 000 tokens a result.
  defaultLineLimit: 2_000,
  maxLineChars: 2_000,
  maxOutputTokens: 25_000,
  // Anthropic's API takes images up to 5 MB (base64) and 8 000 px a side; Bedrock 3.75 MB raw.
  maxImageBytes: 3.75 * 1024 * 1024,
  maxImageSide: 8_000,
  // Past the requested range, lines are counted in at most this many bytes, to say how long the file is.
  countBytes: 64 * 1024 * 1024,
};

/** Image formats every provider takes, by their first bytes. */
const IMAGE_SIGNATURES: readonly { mediaType: string; matches(head: Buffer): boolean }[] = [
  {
    mediaType: "image/png",
    matches: (head) => head.subarray(0, 8).equals(Buffer.from("89504e470d0a1a0a", "hex")),
  },
  { mediaType: "image/jpeg", matches: (head) => head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff },
  { mediaType: "image/gif", matches: (head) => head.subarray(0, 4).toString("latin1") === "GIF8" },
  {
    mediaType: "image/webp",
    matches: (head) =>
      head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP",
  },
];

const DESCRIPTION = `Reads a file from the local filesystem.
- file_path is an absolute path, or a path relative to the working directory.
- By default it returns up to 2000 lines from the start of the file; for a long file, pass offset (the line number to start at) and limit (how many lines).
- Lines come numbered like cat -n (the number, a tab, then the line); lines over 2000 characters are cut.
- Images (PNG, JPEG, GIF, WebP) are returned as images. Binary files are refused: inspect them with Bash.
- Reading a file again when it has not changed returns a short note instead of the same content.
- Read a file before you Edit or Write it.`;

function formatLines(lines: readonly RangeLine[], first: number): string {
  return lines
    .map((line, index) => {
      const cut =
        line.length > line.text.length ? `… [${line.length - line.text.length} more characters]` : "";
      return `${String(first + index).padStart(6)}\t${line.text}${cut}`;
    })
    .join("\n");
}

/** The longest prefix of `lines` whose numbered text fits in `maxTokens`: at least one line. */
function fitToTokens(lines: readonly RangeLine[], first: number, maxTokens: number): number {
  if (estimateTextTokens(formatLines(lines, first)) <= maxTokens) return lines.length;
  let low = 1;
  let high = lines.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (estimateTextTokens(formatLines(lines.slice(0, middle), first)) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Creates the Read tool: numbered lines, `offset`/`limit`, images, a stub for unchanged re-reads. */
export function createReadTool(options: ReadToolOptions = {}): Tool {
  checkWholeNumberOption(options.maxFileBytes, "maxFileBytes");
  checkWholeNumberOption(options.defaultLineLimit, "defaultLineLimit");
  checkWholeNumberOption(options.maxLineChars, "maxLineChars");
  checkWholeNumberOption(options.maxOutputTokens, "maxOutputTokens");
  checkWholeNumberOption(options.maxImageBytes, "maxImageBytes");
  const settings = {
    maxFileBytes: options.maxFileBytes ?? DEFAULTS.maxFileBytes,
    defaultLineLimit: options.defaultLineLimit ?? DEFAULTS.defaultLineLimit,
    maxLineChars: options.maxLineChars ?? DEFAULTS.maxLineChars,
    maxOutputTokens: options.maxOutputTokens ?? DEFAULTS.maxOutputTokens,
    maxImageBytes: options.maxImageBytes ?? Math.floor(DEFAULTS.maxImageBytes),
    now: options.now ?? Date.now,
  };
  const name = BUILTIN_TOOL_NAMES.read;

  async function run(input: Record<string, unknown>, context: ToolContext): Promise<ToolOutput["content"]> {
    const requested = requiredString(name, input, "file_path");
    // offset 0 is taken as the first line, as models often send it.
    const offset = optionalInteger(name, input, "offset", { min: 0 });
    const limit = optionalInteger(name, input, "limit", { min: 1 });
    const path = await resolveToolPath(requested, context, options, "read");
    const shown = displayPath(path, context.cwd);
    const file = await openRegularFile(path, shown);
    if (file === undefined) {
      throw new ToolCallError(`${shown} does not exist (the working directory is ${context.cwd}).`);
    }
    try {
      const snapshot = { mtimeNs: file.stats.mtimeNs, size: Number(file.stats.size) };
      const range = { offset, limit };
      if (takeUnchangedReread(context.sessionState, path, snapshot, range)) {
        return `${shown} has not changed since you last read it (same lines): its content is in that earlier result. If that result is no longer in your context, read it again.`;
      }
      const image = await readImage(file, shown, settings.maxImageBytes);
      const kind = image === undefined ? "text" : "image";
      const result = image ?? (await readText(file, shown, offset, limit, settings));
      recordFileRead(
        context.sessionState,
        path,
        { ...snapshot, hash: result.hash },
        {
          kind,
          readAt: settings.now(),
          offset,
          limit,
          contentInContext: true,
        },
      );
      return result.content;
    } finally {
      await file.handle.close();
    }
  }

  return defineBuiltinTool({
    name,
    description: DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: {
        file_path: filePathProperty("read"),
        offset: {
          type: "integer",
          minimum: 0,
          description: "The line number to start reading from. Only for files too long to read at once.",
        },
        limit: {
          type: "integer",
          minimum: 1,
          description: "How many lines to read. Only for files too long to read at once.",
        },
      },
      required: ["file_path"],
      additionalProperties: false,
    },
    readOnly: true,
    resultRetention: "reproducible",
    concurrencySafe: true,
    permissionSubject: (input, context) => pathSubject(input.file_path, context, "read"),
    run,
  });
}

interface ReadResult {
  content: ToolOutput["content"];
  /** SHA-256 of the whole file, when it was read whole. */
  hash: string | undefined;
}

async function readImage(
  file: OpenedFile,
  shown: string,
  maxImageBytes: number,
): Promise<ReadResult | undefined> {
  const head = Buffer.alloc(16);
  await file.handle.read(head, 0, head.length, 0);
  const signature = IMAGE_SIGNATURES.find((candidate) => candidate.matches(head));
  if (signature === undefined) return undefined;
  const size = Number(file.stats.size);
  if (size > maxImageBytes) {
    throw new ToolCallError(
      `${shown} is an image of ${formatSize(size)}, more than the ${formatSize(maxImageBytes)} an image may have. Make a smaller copy with Bash (e.g. \`convert ${shown} -resize 50% /tmp/smaller.png\`, or Python's PIL) and read that.`,
    );
  }
  const bytes = await file.handle.readFile();
  let width: number | undefined;
  let height: number | undefined;
  // image-size (a few dozen modules) loads with the first image read, not with every start of a program.
  const { imageSize } = await import("image-size");
  try {
    ({ width, height } = imageSize(bytes));
  } catch {
    throw new ToolCallError(
      `${shown} starts like a ${signature.mediaType} image but cannot be decoded; it may be damaged.`,
    );
  }
  if (width > DEFAULTS.maxImageSide || height > DEFAULTS.maxImageSide) {
    throw new ToolCallError(
      `${shown} is ${width}×${height} pixels; images may be at most ${DEFAULTS.maxImageSide} pixels a side. Make a smaller copy with Bash (e.g. \`convert ${shown} -resize 4000x4000 /tmp/smaller.png\`) and read that.`,
    );
  }
  const text: TextBlock = { type: "text", text: `Image ${shown} (${width}×${height}, ${formatSize(size)}):` };
  const block: ImageBlock = {
    type: "image",
    source: { type: "base64", media_type: signature.mediaType, data: bytes.toString("base64") },
    width,
    height,
  };
  return { content: [text, block], hash: hashBytes(bytes) };
}

async function readText(
  file: OpenedFile,
  shown: string,
  offset: number | undefined,
  limit: number | undefined,
  settings: { maxFileBytes: number; defaultLineLimit: number; maxLineChars: number; maxOutputTokens: number },
): Promise<ReadResult> {
  const size = Number(file.stats.size);
  const first = Math.max(1, offset ?? 1);
  // A result holds at most maxOutputTokens lines (each is a token at least), so a larger limit collects no
  // more: a limit of a billion on a large file would otherwise hold every line of it in memory.
  const count = Math.min(limit ?? settings.defaultLineLimit, settings.maxOutputTokens);
  let lines: RangeLine[];
  let totalLines: number;
  let totalIsExact = true;
  let hash: string | undefined;
  if (size <= settings.maxFileBytes) {
    const bytes = await file.handle.readFile();
    const decoded = decodeFile(bytes);
    if (decoded.kind === "binary") throw binaryError(shown, decoded.what);
    hash = hashBytes(bytes);
    const all = displayLines(decoded.text);
    totalLines = all.length;
    lines = all.slice(first - 1, first - 1 + count).map((line) => ({
      text: line.length > settings.maxLineChars ? line.slice(0, settings.maxLineChars) : line,
      length: line.length,
    }));
  } else if (offset === undefined && limit === undefined) {
    throw new ToolCallError(
      `${shown} is ${formatSize(size)}, more than the ${formatSize(settings.maxFileBytes)} a Read returns whole. Read it in parts with offset and limit (e.g. offset 1 and limit 500, then offset 501), or find the lines you need with Grep first.`,
    );
  } else {
    const range = await readLineRange(file.handle, {
      first,
      count,
      maxLineChars: settings.maxLineChars,
      countBytes: DEFAULTS.countBytes,
    });
    if (range.binary !== undefined) throw binaryError(shown, range.binary);
    ({ lines, totalLines, totalIsExact } = range);
  }
  if (totalLines === 0) return { content: `${shown} is empty.`, hash };
  if (lines.length === 0) {
    throw new ToolCallError(
      `offset ${offset} is past the end of ${shown}, which has ${totalLines}${totalIsExact ? "" : "+"} lines.`,
    );
  }
  const fitting = fitToTokens(lines, first, settings.maxOutputTokens);
  const shownLines = lines.slice(0, fitting);
  const lastShown = first + shownLines.length - 1;
  let text = formatLines(shownLines, first);
  const total = `${totalLines}${totalIsExact ? "" : "+"}`;
  if (fitting < lines.length) {
    text += `\n\n(Lines ${first}–${lastShown} of ${total}: the rest of the range does not fit in one result of ~${settings.maxOutputTokens.toLocaleString("en-US")} tokens. Read on with offset ${lastShown + 1}.)`;
  } else if (lastShown < totalLines) {
    text += `\n\n(Lines ${first}–${lastShown} of ${total}. Read on with offset ${lastShown + 1}.)`;
  }
  return { content: text, hash };
}

function binaryError(shown: string, what: string): ToolCallError {
  return new ToolCallError(
    `${shown} is ${what}; Read returns text and images only. Inspect it with Bash (e.g. \`file ${shown}\`, \`xxd ${shown} | head\`, or pdftotext for a PDF).`,
  );
}
