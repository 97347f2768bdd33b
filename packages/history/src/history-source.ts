import { join } from "node:path";
import { ConfigurationError, type Tool } from "@unforget/core";
import type { TranscriptEntry, TranscriptEntryInput } from "@unforget/transcript";
import { TranscriptWriter } from "@unforget/transcript";
import { createHistoryTools, type HistorySource } from "./history-tools.ts";
import { type OpenHistoryOptions, openHistory, type SessionHistory } from "./session-history.ts";

/**
 * What a system prompt says about the history tools, so the model reaches for them instead of re-running a
 * command or re-reading a file (the session puts it after its system prompt; an adapter's caller does).
 */
export const HISTORY_TOOLS_NOTE =
  "Nothing of this session is lost when the context is compacted. context_status tells you how full the context is and what was cleared or summarised; history_search finds anything said, run or read earlier in this session (even what was cleared), and history_read returns it byte-exact by the id a search hit, a cleared result's marker or a summary names.";

/**
 * The history of one transcript, opened on first use and kept (each search reads what was appended since); an
 * open that fails (no transcript written yet) is tried again on the next call.
 */
export function createHistorySource(options: OpenHistoryOptions): HistorySource {
  let opened: Promise<SessionHistory> | undefined;
  return () => {
    if (opened) return opened;
    const pending = openHistory(options);
    pending.catch(() => {
      if (opened === pending) opened = undefined;
    });
    opened = pending;
    return pending;
  };
}

/** A transcript sink on a file that is opened when the first entries come (adapters' constructors are synchronous). */
export interface TranscriptFile {
  readonly path: string;
  append(entries: readonly TranscriptEntryInput[]): Promise<TranscriptEntry[]>;
  /** Closes the file, when it was opened. */
  close(): Promise<void>;
}

/**
 * A transcript written to `path` (its folder made when needed), for a host that keeps none of its own: the
 * history tools index it. Open it once per conversation; entries are appended as the context manager records them.
 */
export function createTranscriptFile(path: string, options: { sessionId?: string } = {}): TranscriptFile {
  let writer: Promise<TranscriptWriter> | undefined;
  return {
    path,
    async append(entries) {
      writer ??= TranscriptWriter.open(path, options.sessionId ? { sessionId: options.sessionId } : {});
      return (await writer).append(entries);
    },
    async close() {
      if (writer) await (await writer).close();
    },
  };
}

/** What `createHostHistory` needs: the host's transcript (a sink with a path), or a folder to write one in. */
export interface HostHistoryOptions {
  /** The host's transcript sink (a `TranscriptWriter`); it needs a path to be indexed. */
  transcript?: { readonly path?: string; append(entries: readonly TranscriptEntry[]): unknown };
  /** The session's folder: without a `transcript`, one is written to `<sessionDir>/transcript.jsonl`. */
  sessionDir?: string;
  sessionId?: string;
}

/** The history tools of a host that runs its own loop (the adapters), and the transcript they index. */
export interface HostHistory {
  /** The transcript indexed. */
  readonly path: string;
  /** What the context manager writes to: the host's transcript, or the one `createHostHistory` opened. */
  readonly transcript: { readonly path?: string; append(entries: readonly TranscriptEntry[]): unknown };
  /** `history_search` and `history_read` (core's `Tool`). */
  readonly tools: Tool[];
}

/**
 * The history tools for a host that keeps its conversation through a context manager: they index the host's
 * `transcript`, or, when it gave none, a transcript written to `<sessionDir>/transcript.jsonl` (pass
 * `result.transcript` to the manager). `ConfigurationError` when there is neither.
 */
export function createHostHistory(options: HostHistoryOptions): HostHistory {
  const given = options.transcript;
  let path: string;
  let transcript: HostHistory["transcript"];
  if (given?.path) {
    path = given.path;
    transcript = given;
  } else if (given === undefined && options.sessionDir !== undefined) {
    path = join(options.sessionDir, "transcript.jsonl");
    transcript = createTranscriptFile(path, options.sessionId ? { sessionId: options.sessionId } : {});
  } else {
    throw new ConfigurationError(
      "The history tools need a transcript to index: pass `sessionDir` (a transcript is then written to <sessionDir>/transcript.jsonl) or a `transcript` with a path (a TranscriptWriter of @unforget/transcript).",
    );
  }
  const source = createHistorySource({
    transcriptPath: path,
    ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
  });
  return { path, transcript, tools: createHistoryTools(source) };
}
