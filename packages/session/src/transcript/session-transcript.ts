import { access } from "node:fs/promises";
import { join } from "node:path";
import type { TranscriptSink } from "@unforget/compact";
import type { Message } from "@unforget/core";
import {
  readTranscript,
  type TranscriptEntry,
  type TranscriptEntryInput,
  TranscriptWriter,
} from "@unforget/transcript";
import { SessionNotFoundError } from "../loop/session-errors.ts";

/** Where a session's transcript lives: `<sessionsDir>/<sessionId>.jsonl`. */
export function transcriptPathOf(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, `${sessionId}.jsonl`);
}

/**
 * The session's transcript. The session writes every message the moment it is appended (a tool_use is on
 * disk before its tool runs, an answer before the turn ends); the context manager writes its own entries
 * (layer decisions, boundaries, summaries, attachments) through `sink`, which passes on everything but the
 * messages the session already wrote. Both go through one `TranscriptWriter`, so lines land in call order.
 */
export class SessionTranscript {
  readonly path: string;
  readonly #writer: TranscriptWriter;
  // Ids of the messages written (or resumed) that the manager has not passed back through `sink` yet.
  readonly #written = new Set<string>();
  /** What the manager writes through: its message entries are the session's, already on disk. */
  readonly sink: TranscriptSink;

  private constructor(path: string, writer: TranscriptWriter, known: Iterable<string>) {
    this.path = path;
    this.#writer = writer;
    for (const id of known) this.#written.add(id);
    const written = this.#written;
    this.sink = {
      path,
      append: (entries: readonly TranscriptEntry[]) => {
        // The manager passes each message once (it never records an id twice): once skipped, its id is let go,
        // so what the set holds stays the messages the manager has not seen yet, not every id of the session.
        const fresh = entries.filter((entry) => entry.type !== "message" || !written.delete(entry.id));
        return fresh.length === 0 ? undefined : writer.append(fresh);
      },
    };
  }

  /** Opens (creating) the transcript of a new session, or of a resumed one with the entries already in it. */
  static async open(path: string, sessionId: string, entries: readonly TranscriptEntry[] = []) {
    const writer = await TranscriptWriter.open(path, { sessionId });
    return new SessionTranscript(
      path,
      writer,
      entries.flatMap((entry) => (entry.type === "message" ? [entry.id] : [])),
    );
  }

  /** Writes one message; resolves once it is on disk (rejects with `TranscriptWriteError`). */
  async appendMessage(message: Message): Promise<void> {
    this.#written.add(message.id);
    await this.#writer.append({ type: "message", message });
  }

  /** Writes any other entry (a hook result, metadata). */
  async appendEntry(entry: TranscriptEntryInput): Promise<void> {
    await this.#writer.append(entry);
  }

  async close(): Promise<void> {
    await this.#writer.close();
  }
}

/** The entries of a session to resume; `SessionNotFoundError` when its transcript does not exist. */
export async function readSessionEntries(sessionsDir: string, sessionId: string): Promise<TranscriptEntry[]> {
  const path = transcriptPathOf(sessionsDir, sessionId);
  try {
    await access(path);
  } catch (error) {
    throw new SessionNotFoundError(sessionId, path, { cause: error });
  }
  // Torn or invalid lines are copied to `<path>.bad` by the reader; the valid entries are the session.
  return (await readTranscript(path)).entries;
}
