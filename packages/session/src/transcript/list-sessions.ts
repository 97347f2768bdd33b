import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { getMessageText } from "@unforget/core";

/** One session in a sessions folder, as a "resume" picker shows it. */
export interface SessionSummary {
  sessionId: string;
  /** `<sessionsDir>/<sessionId>.jsonl`. */
  path: string;
  /** When the transcript was last written (ISO-8601). */
  modifiedAt: string;
  sizeBytes: number;
  /** The title recorded for the session (`metadata` entry), when there is one. */
  title?: string;
  /** The first prompt of the user, cut to 200 characters. */
  firstPrompt?: string;
}

/** How much of a transcript's head and tail is read for its summary: listing never reads whole files. */
const PEEK_BYTES = 65_536;
const PROMPT_CHARS = 200;

/**
 * The sessions in `sessionsDir`, most recently written first (for `--continue`, take the first). Reads only the
 * head and tail of each transcript. A folder that does not exist has no sessions.
 */
export async function listSessions(sessionsDir: string): Promise<SessionSummary[]> {
  let names: string[];
  try {
    names = await readdir(sessionsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const summaries: SessionSummary[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const path = join(sessionsDir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    const summary: SessionSummary = {
      sessionId: name.slice(0, -".jsonl".length),
      path,
      modifiedAt: info.mtime.toISOString(),
      sizeBytes: info.size,
    };
    const { head, tail } = await peek(path, info.size);
    const prompt = firstPrompt(head);
    if (prompt !== undefined) summary.firstPrompt = prompt;
    const title = lastTitle(tail) ?? lastTitle(head);
    if (title !== undefined) summary.title = title;
    summaries.push(summary);
  }
  return summaries.sort(
    (a, b) => b.modifiedAt.localeCompare(a.modifiedAt) || a.sessionId.localeCompare(b.sessionId),
  );
}

async function peek(path: string, size: number): Promise<{ head: string[]; tail: string[] }> {
  const handle = await open(path, "r");
  try {
    const read = async (position: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, position);
      return buffer.subarray(0, bytesRead).toString("utf8");
    };
    const headText = await read(0, Math.min(size, PEEK_BYTES));
    // Lines cut at either end of a peek are not JSON and are skipped.
    const head = headText.split("\n");
    if (size <= PEEK_BYTES) return { head, tail: head };
    const tail = (await read(size - PEEK_BYTES, PEEK_BYTES)).split("\n");
    return { head, tail };
  } finally {
    await handle.close();
  }
}

function entries(lines: readonly string[]): Record<string, unknown>[] {
  return lines.flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      const value = JSON.parse(line) as unknown;
      return typeof value === "object" && value !== null ? [value as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

function firstPrompt(lines: readonly string[]): string | undefined {
  for (const entry of entries(lines)) {
    const message = entry.message as { role?: unknown; isMeta?: unknown; content?: unknown } | undefined;
    if (entry.type !== "message" || message?.role !== "user" || message.isMeta === true) continue;
    if (!Array.isArray(message.content)) continue;
    const text = getMessageText({
      content: message.content.filter((block) => block?.type === "text"),
    }).trim();
    if (text !== "") return text.length > PROMPT_CHARS ? `${text.slice(0, PROMPT_CHARS)}…` : text;
  }
  return undefined;
}

function lastTitle(lines: readonly string[]): string | undefined {
  let title: string | undefined;
  for (const entry of entries(lines)) {
    if (entry.type === "metadata" && typeof entry.title === "string") title = entry.title;
  }
  return title;
}
