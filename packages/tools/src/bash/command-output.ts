import { open, rm } from "node:fs/promises";
import { formatSize } from "../format-size.ts";

/** Colour, cursor and charset sequences (CSI, OSC, designations), which start with ESC. */
const ANSI_SEQUENCES = new RegExp(
  [
    String.raw`\u001b\[[0-9;?]*[ -/]*[@-~]`,
    String.raw`\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)`,
    String.raw`\u001b[()][0-9A-Za-z]`,
  ].join("|"),
  "g",
);

/**
 * Command output as a terminal would leave it: colour and cursor sequences removed, and a line redrawn with
 * carriage returns (a progress bar) kept only as it was last drawn.
 */
export function cleanTerminalOutput(text: string): string {
  return text
    .replace(ANSI_SEQUENCES, "")
    .split("\n")
    .map((line) => {
      const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
      const redrawn = trimmed.lastIndexOf("\r");
      return redrawn === -1 ? trimmed : trimmed.slice(redrawn + 1);
    })
    .join("\n")
    .replace(/\s+$/, "");
}

/** What a command printed, as the model sees it. */
export interface CommandOutput {
  text: string;
  /** The output was cut in the middle; the whole of it stays in the file. */
  cut: boolean;
}

/**
 * Reads a command's output file without holding more than `maxChars` bytes of it: the whole file when it
 * fits, else its head and its tail with a note in the middle saying where the rest is. A file that fitted is
 * deleted; a cut one is kept for the model to read.
 */
export async function readCommandOutput(
  path: string,
  maxChars: number,
  shownPath: string,
): Promise<CommandOutput> {
  const handle = await open(path, "r");
  let cut = false;
  try {
    const size = (await handle.stat()).size;
    // A UTF-8 file has at least as many bytes as characters: one that fits in bytes fits in characters.
    if (size <= maxChars)
      return { text: cleanTerminalOutput((await handle.readFile()).toString("utf8")), cut };
    cut = true;
    const half = Math.floor(maxChars / 2);
    const head = Buffer.alloc(Math.min(half, size));
    await handle.read(head, 0, head.length, 0);
    const tail = Buffer.alloc(Math.min(half, size));
    await handle.read(tail, 0, tail.length, size - tail.length);
    const omitted = size - head.length - tail.length;
    const note = `[… ${formatSize(omitted)} of output left out here. The whole output (${formatSize(size)}) is in ${shownPath}: read parts of it with Read (offset and limit) or search it with Grep, rather than running the command again …]`;
    const text = `${cleanTerminalOutput(head.toString("utf8"))}\n\n${note}\n\n${cleanTerminalOutput(tail.toString("utf8"))}`;
    return { text, cut };
  } finally {
    await handle.close();
    if (!cut) await rm(path, { force: true });
  }
}
