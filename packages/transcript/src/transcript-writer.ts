import type { FileHandle } from "node:fs/promises";
import { mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import type { Message } from "@unforget/core";
import type { MessageEntry, TranscriptEntry, TranscriptEntryInput } from "./transcript-entry.ts";
import { createTranscriptEntry } from "./transcript-entry.ts";
import { TranscriptWriteError } from "./transcript-errors.ts";

/**
 * When the writer calls fsync:
 * - `boundaries` (default): after a compact_boundary or summary entry, on `sync()` and on `close()`;
 * - `always`: after every `append` call;
 * - `never`: only on an explicit `sync()`.
 */
export type TranscriptFsyncMode = "boundaries" | "always" | "never";

export interface TranscriptWriterOptions {
  /** Filled into entries that have no `sessionId`. */
  sessionId?: string;
  /** When to fsync (default "boundaries"). */
  fsync?: TranscriptFsyncMode;
}

const BOUNDARY_TYPES: ReadonlySet<string> = new Set(["compact_boundary", "summary"]);
const NEWLINE = 0x0a;

/**
 * Appends entries to a JSONL transcript. Each entry is one `JSON + "\n"` buffer written with a single write on
 * an O_APPEND descriptor, so lines from concurrent writers never interleave; this writer's own appends are
 * serialised through a queue, so they land in call order. Entries already on disk are never rewritten.
 */
export class TranscriptWriter {
  readonly path: string;
  readonly sessionId: string | undefined;
  readonly #handle: FileHandle;
  readonly #fsync: TranscriptFsyncMode;
  #queue: Promise<unknown> = Promise.resolve();
  #checkTail = true;
  #closed = false;

  private constructor(path: string, handle: FileHandle, options: TranscriptWriterOptions) {
    this.path = path;
    this.#handle = handle;
    this.sessionId = options.sessionId;
    this.#fsync = options.fsync ?? "boundaries";
  }

  /** Opens (creating it and its parent folders if needed) a transcript for appending. */
  static async open(path: string, options: TranscriptWriterOptions = {}): Promise<TranscriptWriter> {
    try {
      await mkdir(dirname(path), { recursive: true });
      const handle = await open(path, "a+");
      return new TranscriptWriter(path, handle, options);
    } catch (error) {
      throw new TranscriptWriteError(
        `Could not open transcript ${path} for appending (${describe(error)}); check that the folder is writable.`,
        { path, cause: error },
      );
    }
  }

  /**
   * Appends one entry or several (each on its own line, contiguous with respect to this writer's other
   * appends). Resolves with the completed entries once they are written (and synced, per the fsync mode).
   */
  append(input: TranscriptEntryInput): Promise<TranscriptEntry[]>;
  append(inputs: readonly TranscriptEntryInput[]): Promise<TranscriptEntry[]>;
  append(input: TranscriptEntryInput | readonly TranscriptEntryInput[]): Promise<TranscriptEntry[]> {
    if (this.#closed) {
      return Promise.reject(
        new TranscriptWriteError(
          `The writer for ${this.path} is closed; open a new TranscriptWriter to append.`,
          {
            path: this.path,
          },
        ),
      );
    }
    const inputs: readonly TranscriptEntryInput[] = Array.isArray(input)
      ? input
      : [input as TranscriptEntryInput];
    let entries: TranscriptEntry[];
    let lines: Buffer[];
    try {
      entries = inputs.map((item) => createTranscriptEntry(item, this.#defaults()));
      lines = entries.map((entry) => Buffer.from(`${JSON.stringify(entry)}\n`, "utf8"));
    } catch (error) {
      return Promise.reject(
        new TranscriptWriteError(
          `An entry for ${this.path} could not be serialised as JSON (${describe(error)}); nothing was written. Remove circular references and BigInt values.`,
          { path: this.path, cause: error },
        ),
      );
    }
    const shouldSync =
      this.#fsync === "always" ||
      (this.#fsync === "boundaries" && entries.some((e) => BOUNDARY_TYPES.has(e.type)));
    return this.#enqueue(async () => {
      for (const line of lines) await this.#writeLine(line);
      if (shouldSync) await this.#handle.sync();
      return entries;
    });
  }

  /** Appends a message entry (its id becomes the entry id). */
  async appendMessage(message: Message): Promise<MessageEntry> {
    const [entry] = await this.append({ type: "message", message });
    return entry as MessageEntry;
  }

  /** Waits for queued appends, then flushes the file to disk. */
  sync(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#enqueue(() => this.#handle.sync());
  }

  /** Waits for queued appends, syncs (unless fsync is "never") and closes the file. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const pending = this.#queue.catch(() => undefined);
    await pending;
    try {
      if (this.#fsync !== "never") await this.#handle.sync();
    } catch (error) {
      await this.#handle.close().catch(() => undefined);
      throw new TranscriptWriteError(
        `Could not flush transcript ${this.path} to disk (${describe(error)}).`,
        {
          path: this.path,
          cause: error,
        },
      );
    }
    await this.#handle.close();
  }

  #defaults(): { sessionId?: string } {
    return this.sessionId === undefined ? {} : { sessionId: this.sessionId };
  }

  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task).catch((error: unknown) => {
      // A failed write may have left a partial line: the next write re-checks the tail.
      this.#checkTail = true;
      throw error instanceof TranscriptWriteError
        ? error
        : new TranscriptWriteError(
            `Appending to transcript ${this.path} failed (${describe(error)}); the entry may not be on disk. Check free space and permissions, then append again.`,
            { path: this.path, cause: error },
          );
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #writeLine(line: Buffer): Promise<void> {
    let buffer = line;
    if (this.#checkTail) {
      // A file that does not end with a newline has a torn last line (a crash mid-write): start a new line
      // so that the fragment stays one isolated invalid line and this entry stays valid.
      const { size } = await this.#handle.stat();
      if (size > 0) {
        const last = Buffer.alloc(1);
        await this.#handle.read(last, 0, 1, size - 1);
        if (last[0] !== NEWLINE) buffer = Buffer.concat([Buffer.from("\n"), line]);
      }
      this.#checkTail = false;
    }
    const { bytesWritten } = await this.#handle.write(buffer, 0, buffer.length);
    if (bytesWritten !== buffer.length) {
      this.#checkTail = true;
      throw new TranscriptWriteError(
        `Only ${bytesWritten} of ${buffer.length} bytes reached transcript ${this.path}; the disk may be full. The partial line will be isolated on the next append.`,
        { path: this.path },
      );
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
