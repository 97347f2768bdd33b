import type { Message } from "@unforget/core";
import { resultText } from "../conversation/conversation.ts";
import type { RetentionLookup } from "./compactable-tools.ts";
import { persistedOutputPath, persistOutput } from "./persist-output.ts";

/**
 * The session's saved outputs as they are written: an output of a tool that is not reproducible starts to be
 * saved when it arrives, in the background, so that a later step whose cheap layers clear it finds the write
 * done instead of waiting for its fsyncs. Nothing may point at a file before its write has completed:
 * `persist` resolves only then (awaiting the write already running, or writing now).
 */
export interface OutputSaver {
  /** Called with the messages `prepare` appended: starts saving the outputs of tools that are not reproducible. */
  arrived(added: readonly Message[]): void;
  /** Resolves once `path` durably holds `text`; rejects (`TranscriptWriteError`) when it cannot be written. */
  persist(path: string, text: string): Promise<void>;
  /** Resolves once every write started so far has finished (written or failed). */
  flush(): Promise<void>;
}

interface Write {
  readonly text: string;
  readonly done: Promise<void>;
}

/** A saver for `<sessionDir>/tool-results/`, starting writes for the tools `retention` says are not reproducible. */
export function createOutputSaver(sessionDir: string, retention: RetentionLookup): OutputSaver {
  const state = { sessionDir, retention, writes: new Map<string, Write>(), names: new Map<string, string>() };
  return {
    arrived: (added) => arrived(state, added),
    persist: (path, text) => persist(state, path, text),
    flush: async () => {
      await Promise.allSettled([...state.writes.values()].map((write) => write.done));
    },
  };
}

interface SaverState {
  readonly sessionDir: string;
  readonly retention: RetentionLookup;
  /** The write of each path, started or finished (a failed one is forgotten, and tried again when asked for). */
  readonly writes: Map<string, Write>;
  /** Tool names of the calls whose results have not arrived yet. */
  readonly names: Map<string, string>;
}

function arrived(state: SaverState, added: readonly Message[]): void {
  for (const message of added) {
    for (const block of message.content) {
      if (block.type === "tool_use") state.names.set(block.id, block.name);
      if (block.type !== "tool_result") continue;
      const name = state.names.get(block.tool_use_id);
      state.names.delete(block.tool_use_id);
      if (name === undefined || state.retention(name) !== "persist") continue;
      const path = persistedOutputPath(state.sessionDir, block.tool_use_id);
      if (!state.writes.has(path)) start(state, path, resultText(block));
    }
  }
}

function start(state: SaverState, path: string, text: string, now = false): Write {
  // Begun after the step that saw the output has returned (its request is on its way), unless asked for now.
  const done = now ? persistOutput(path, text) : afterStep().then(() => persistOutput(path, text));
  const write: Write = { text, done };
  state.writes.set(path, write);
  // A write that fails in the background is forgotten; the layer that wants the file writes it again.
  write.done.catch(() => {
    if (state.writes.get(path) === write) state.writes.delete(path);
  });
  return write;
}

async function persist(state: SaverState, path: string, text: string): Promise<void> {
  const running = state.writes.get(path);
  if (running?.text === text) {
    try {
      return await running.done;
    } catch {
      // Tried once more below, as any write asked for now.
    }
  } else if (running) await running.done.catch(() => undefined);
  return start(state, path, text, true).done;
}

function afterStep(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
