import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { default as MiniSearch, Options } from "minisearch";
import type { ExtractionState, ItemDocument, ItemRecord } from "./history-items.ts";

/** What the saved index is called, in the session's folder. */
export const SAVED_INDEX_FILE = "history-index.json";
const FORMAT = "unforget-history-index";
/** Bumped whenever what is saved, or how items are extracted, changes: an index of another version is rebuilt. */
// 2: user text items say whether the user wrote them (`authored`), which ranges of user messages list.
const VERSION = 2;

/** One transcript as far as the index has read it. */
export interface SavedSource {
  path: string;
  sessionDir: string;
  offset: number;
  line: number;
  state: ExtractionState;
}

/** The index as it is loaded: the search index, the items and where each transcript was read to. */
export interface LoadedIndex {
  index: MiniSearch<ItemDocument>;
  items: Map<string, ItemRecord>;
  sources: SavedSource[];
}

interface SavedFile {
  format: typeof FORMAT;
  version: number;
  sources: {
    path: string;
    sessionDir: string;
    offset: number;
    line: number;
    fingerprint: string;
    state: { turn: number; agent?: string; parentTurn?: number; pending: [string, unknown][] };
  }[];
  items: ItemRecord[];
  index: unknown;
}

/**
 * sha256 of the transcript's first `offset` bytes, what the index was built from: a transcript replaced by another,
 * even of the same length, differs (hashing is some 50 ms for 20 MB, far less than indexing it again).
 */
async function fingerprint(path: string, offset: number): Promise<string | undefined> {
  const hash = createHash("sha256");
  let read = 0;
  try {
    if (offset > 0)
      for await (const chunk of createReadStream(path, { start: 0, end: offset - 1 })) {
        hash.update(chunk as Uint8Array);
        read += (chunk as Uint8Array).length;
      }
  } catch {
    return undefined;
  }
  return read === offset ? hash.digest("hex") : undefined;
}

/**
 * Writes the index beside the transcript (atomically: a temporary file renamed over the old one). It is derived
 * data: a failure (a read-only folder, a full disk) leaves the session without it, and the next open rebuilds.
 */
export async function saveIndex(
  file: string,
  index: MiniSearch<ItemDocument>,
  items: ReadonlyMap<string, ItemRecord>,
  sources: readonly SavedSource[],
): Promise<boolean> {
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    const saved: SavedFile = {
      format: FORMAT,
      version: VERSION,
      sources: [],
      items: [...items.values()],
      index: index.toJSON(),
    };
    for (const source of sources) {
      const print = await fingerprint(source.path, source.offset);
      if (print === undefined) return false;
      saved.sources.push({
        path: source.path,
        sessionDir: source.sessionDir,
        offset: source.offset,
        line: source.line,
        fingerprint: print,
        state: {
          turn: source.state.turn,
          ...(source.state.agent === undefined ? {} : { agent: source.state.agent }),
          ...(source.state.parentTurn === undefined ? {} : { parentTurn: source.state.parentTurn }),
          pending: [...source.state.pending],
        },
      });
    }
    await mkdir(dirname(file), { recursive: true });
    await writeFile(temporary, JSON.stringify(saved), { mode: 0o600 });
    await rename(temporary, file);
    return true;
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * The saved index, when there is one of this version for this transcript and every transcript it read still
 * holds what it read (the bytes up to where it stopped hash the same); otherwise undefined, and the caller
 * indexes from the start. Never throws: a broken or foreign file is only a slower open.
 */
export async function loadIndex(
  file: string,
  transcriptPath: string,
  engine: typeof MiniSearch,
  options: Options<ItemDocument>,
): Promise<LoadedIndex | undefined> {
  try {
    const saved = JSON.parse(await readFile(file, "utf8")) as SavedFile;
    if (saved.format !== FORMAT || saved.version !== VERSION || saved.sources[0]?.path !== transcriptPath)
      return undefined;
    for (const source of saved.sources)
      if ((await fingerprint(source.path, source.offset)) !== source.fingerprint) return undefined;
    const index = engine.loadJS(saved.index as Parameters<typeof MiniSearch.loadJS>[0], options);
    return {
      index: index as MiniSearch<ItemDocument>,
      items: new Map(saved.items.map((record) => [record.id, record])),
      sources: saved.sources.map((source) => ({
        path: source.path,
        sessionDir: source.sessionDir,
        offset: source.offset,
        line: source.line,
        state: {
          turn: source.state.turn,
          pending: new Map(source.state.pending as [string, never][]),
          ...(source.state.agent === undefined ? {} : { agent: source.state.agent }),
          ...(source.state.parentTurn === undefined ? {} : { parentTurn: source.state.parentTurn }),
        },
      })),
    };
  } catch {
    return undefined;
  }
}

/** Where a session's saved index lives: its folder (the transcript path without `.jsonl`). */
export function savedIndexPath(sessionDir: string): string {
  return join(sessionDir, SAVED_INDEX_FILE);
}
