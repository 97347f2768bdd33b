import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { TranscriptWriteError } from "@unforget/transcript";

/** `<sessionDir>/tool-results/<tool_use_id>`, with characters that are unsafe in a file name replaced. */
export function persistedOutputPath(sessionDir: string, toolUseId: string): string {
  const safe = toolUseId.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_");
  const name =
    safe === toolUseId && safe.length <= 200
      ? safe
      : `${safe.slice(0, 160)}-${createHash("sha256").update(toolUseId).digest("hex").slice(0, 16)}`;
  return join(sessionDir, "tool-results", name);
}

/**
 * Writes a tool output to its file atomically (temporary file, fsync, rename, fsync of the folder) unless the
 * file already holds exactly this text, so a re-run or a resumed session never rewrites it. Resolves once the
 * text is durable: nothing may point at the file before that.
 */
export async function persistOutput(path: string, text: string): Promise<void> {
  try {
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isFile() && existing.size === Buffer.byteLength(text)) {
      if ((await readFile(path, "utf8")) === text) return;
    }
    await writeFileAtomic(path, text, { mode: 0o600 });
  } catch (error) {
    throw new TranscriptWriteError(
      `Could not save a large tool output to ${path} (${error instanceof Error ? error.message : String(error)}); check that the session directory is writable and the disk is not full. The output stays in the context.`,
      { path, cause: error },
    );
  }
}

/** What the model sees instead of a persisted output: where it is, how big, a preview and how to read the rest. */
export function persistedOutputMarker(displayPath: string, text: string, previewChars: number): string {
  const lines = text.split("\n").length;
  const preview = text.slice(0, previewChars);
  const more = text.length > preview.length;
  return [
    `<persisted-output path="${displayPath}" chars="${text.length}" lines="${lines}">`,
    `This output was too large for the context (${text.length.toLocaleString("en-US")} characters, ${lines.toLocaleString("en-US")} lines); it is saved in full at ${displayPath}.`,
    more ? `Preview (first ${preview.length.toLocaleString("en-US")} characters):` : "Content:",
    preview,
    more
      ? `[Read the rest from ${displayPath} with your file-reading tool, using a line offset and limit; do not re-run the command just to see it.]`
      : "",
    "</persisted-output>",
  ]
    .filter((line) => line.length > 0)
    .join("\n");
}
