import { open, readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { streamTranscript, TranscriptNotFoundError } from "@unforget/transcript";
import type { default as MiniSearch, Options } from "minisearch";
import {
  HistoryItemNotFoundError,
  HistoryRangeError,
  HistorySessionNotFoundError,
} from "./history-errors.ts";
import {
  blockText,
  type ExtractionState,
  extractItems,
  type HistoryItemKind,
  type ItemDocument,
  type ItemLocation,
  type ItemRecord,
} from "./history-items.ts";
import { loadIndex, savedIndexPath, saveIndex } from "./saved-index.ts";
import { parseUserRange, type UserRangeListing, userRangeListing } from "./user-range.ts";

/** The history tools' own names: their results are never indexed, so a restored result is not found twice. */
export const HISTORY_TOOL_NAMES: readonly string[] = ["history_search", "history_read", "context_status"];

/** Hits `search` returns when no limit is given, and the most it ever returns. */
const DEFAULT_HITS = 10;
const MAX_HITS = 50;
/** Characters of an excerpt: enough for a line of context on each side of the first term that matched. */
const EXCERPT_CHARS = 240;
/** Characters of a page when `read` is given no limit: about 5K tokens, a fifth of what a file read returns. */
const DEFAULT_PAGE_CHARS = 20_000;
/** Items an open must read from the transcripts before it saves the index: below this, reading is quick anyway. */
const SAVE_AFTER_ITEMS = 500;

export interface OpenHistoryOptions {
  /** The session's transcript (`<sessionsDir>/<sessionId>.jsonl`). */
  transcriptPath: string;
  /** The session's folder, where its sub-agents' transcripts are (default: the transcript path without `.jsonl`). */
  sessionDir?: string;
  /** Tools whose calls are not indexed (default `HISTORY_TOOL_NAMES`). */
  skipTools?: readonly string[];
  /**
   * Whether to load and save the index in the session's folder (`history-index.json`; default true). An open that
   * had to read many items saves what it built, so the next open of a long session reads only what was appended
   * since; a saved index whose transcript changed is ignored and rebuilt.
   */
  savedIndex?: boolean;
}

export interface HistorySearchOptions {
  /** Only calls of this tool (case-insensitive). */
  tool?: string;
  /** Only tool calls whose input names this path (or any text containing it). */
  path?: string;
  /** Only items of these turns (inclusive; turn 1 is the user's first message). */
  turns?: { from?: number; to?: number };
  /** Only items of this kind. */
  kind?: HistoryItemKind;
  /** How many hits at most (default 10, at most 50). */
  limit?: number;
}

/** One search result: where to read it, and enough of it to tell whether it is the one. */
export interface HistoryHit {
  /** Stable across compactions and resumes: the tool_use id of a call, `<message id>:<part>` of text, a summary's id. */
  id: string;
  kind: HistoryItemKind;
  turn: number;
  tool?: string;
  agent?: string;
  isError?: boolean;
  /** BM25 score (higher is better). */
  score: number;
  /** About 240 characters of the item around the first term that matched, on one line. */
  excerpt: string;
  /** The item's length in characters. */
  chars: number;
}

export interface HistoryReadOptions {
  /** First character to return (default 0). */
  offset?: number;
  /** Most characters to return (default 20,000). */
  limit?: number;
}

/** One page of an item, exactly as the transcript holds it: pages joined in order are the original. */
export interface HistoryPage {
  id: string;
  kind: HistoryItemKind;
  turn: number;
  tool?: string;
  agent?: string;
  isError?: boolean;
  /** A tool item's input, as the call gave it. */
  input?: unknown;
  text: string;
  offset: number;
  totalChars: number;
  /** Where the next page starts; absent on the last page. */
  nextOffset?: number;
}

/** A session's whole history, indexed; it follows the transcript as it grows (only new lines are read). */
export interface SessionHistory {
  /** Reads what was appended since the last call (the session's and its sub-agents' transcripts). Search and read call it. */
  refresh(): Promise<void>;
  /** BM25 over every item (calls with their inputs and results, texts, summaries), filtered; best first. */
  search(query: string, options?: HistorySearchOptions): Promise<HistoryHit[]>;
  /**
   * One page of the item with this id, or of the listing of a range of the user's messages (`<first id>..<last
   * id>`, what a summary names for the oldest messages it folded). Throws `HistoryItemNotFoundError`, or
   * `HistoryRangeError` for a bad range.
   */
  read(id: string, options?: HistoryReadOptions): Promise<HistoryPage>;
  /** How many items are indexed. */
  readonly size: number;
  /** What the open cost: items loaded from the saved index, and items read from the transcripts. */
  readonly opened: { loaded: number; read: number };
}

/** One transcript followed: the session's own or a sub-agent's. */
interface Source {
  path: string;
  sessionDir: string;
  offset: number;
  line: number;
  state: ExtractionState;
}

interface HistoryState {
  options: OpenHistoryOptions;
  skipTools: ReadonlySet<string>;
  sources: Source[];
  items: Map<string, ItemRecord>;
  /** minisearch's class, loaded by the first history opened: a session whose history is never searched loads none of it. */
  engine: typeof MiniSearch;
  index: MiniSearch<ItemDocument>;
}

const INDEX_OPTIONS: Options<ItemDocument> = { fields: ["call", "text"], storeFields: [] };
/**
 * The factor on a user message's score: someone searching for what they asked expects their own words before a
 * tool output or a reply that repeats them. Modest, so it settles ties and near-ties (within a fifth) and never
 * puts a user message over an item that matches clearly better. Judgement call.
 */
const USER_MESSAGE_BOOST = 1.2;

function createIndex(engine: typeof MiniSearch): MiniSearch<ItemDocument> {
  return new engine<ItemDocument>(INDEX_OPTIONS);
}

/**
 * Opens a session's history and indexes it whole (the session's transcript, then each sub-agent's under
 * `<sessionDir>/subagents/`). Throws `HistorySessionNotFoundError` when the transcript does not exist.
 */
export async function openHistory(options: OpenHistoryOptions): Promise<SessionHistory> {
  const sessionDir = options.sessionDir ?? options.transcriptPath.replace(/\.jsonl$/, "");
  const engine = (await import("minisearch")).default;
  const state: HistoryState = {
    options,
    skipTools: new Set(options.skipTools ?? HISTORY_TOOL_NAMES),
    sources: [newSource(options.transcriptPath, sessionDir, undefined)],
    items: new Map(),
    engine,
    index: createIndex(engine),
  };
  try {
    await stat(options.transcriptPath);
  } catch (error) {
    throw new HistorySessionNotFoundError(options.transcriptPath, { cause: error });
  }
  const file = options.savedIndex === false ? undefined : savedIndexPath(sessionDir);
  const loaded =
    file === undefined ? undefined : await loadIndex(file, options.transcriptPath, engine, INDEX_OPTIONS);
  if (loaded !== undefined) Object.assign(state, loaded);
  const opened = { loaded: state.items.size, read: 0 };
  await refresh(state);
  opened.read = state.items.size - opened.loaded;
  if (file !== undefined && opened.read >= SAVE_AFTER_ITEMS)
    await saveIndex(file, state.index, state.items, state.sources);
  return {
    refresh: () => refresh(state),
    search: (query, searchOptions) => search(state, query, searchOptions ?? {}),
    read: (id, readOptions) => read(state, id, readOptions ?? {}),
    get size() {
      return state.items.size;
    },
    opened,
  };
}

function newSource(path: string, sessionDir: string, agent: string | undefined): Source {
  const extraction: ExtractionState = { turn: 0, pending: new Map() };
  if (agent !== undefined) extraction.agent = agent;
  return { path, sessionDir, offset: 0, line: 1, state: extraction };
}

async function refresh(state: HistoryState): Promise<void> {
  // Sources found while reading (a sub-agent of a sub-agent) are read in the same pass.
  for (let index = 0; index < state.sources.length; index++) {
    const source = state.sources[index]!;
    await readNewLines(state, source, index);
    await discoverSubAgents(state, source);
  }
}

async function readNewLines(state: HistoryState, source: Source, sourceIndex: number): Promise<void> {
  const size = await stat(source.path).then(
    (info) => info.size,
    () => undefined,
  );
  if (size === undefined || size === source.offset) return;
  if (size < source.offset) {
    // The file was replaced by a shorter one: nothing indexed from it can be trusted, so start over.
    resetAll(state);
    return refresh(state);
  }
  let start = source.offset;
  try {
    for await (const item of streamTranscript(source.path, {
      fromOffset: source.offset,
      fromLine: source.line,
      partialLastLine: "stop",
    })) {
      if (item.kind === "entry") {
        noteParent(state, source, item.entry);
        extractItems(
          item.entry,
          { source: sourceIndex, start, end: item.offset },
          source.state,
          state.skipTools,
          (record, document) => {
            if (state.items.has(record.id)) return;
            state.items.set(record.id, record);
            state.index.add(document);
          },
        );
      }
      start = item.offset;
      source.offset = item.offset;
      source.line = item.line + 1;
    }
  } catch (error) {
    // A sub-agent transcript that vanished or is not one yet is read again next time; the session's own must exist.
    if (sourceIndex === 0 && error instanceof TranscriptNotFoundError) {
      throw new HistorySessionNotFoundError(source.path, { cause: error });
    }
    if (sourceIndex === 0) throw error;
  }
}

/** A sub-agent's transcript names the parent call that started it: its items take that call's turn. */
function noteParent(state: HistoryState, source: Source, entry: { type: string; data?: unknown }): void {
  if (source.state.agent === undefined || entry.type !== "metadata" || !isRecord(entry.data)) return;
  const parentId = entry.data.parentToolUseId;
  if (typeof parentId !== "string") return;
  for (const other of state.sources) {
    const turn = other.state.pending.get(parentId)?.turn ?? state.items.get(parentId)?.turn;
    if (turn !== undefined) {
      source.state.parentTurn = turn;
      return;
    }
  }
}

async function discoverSubAgents(state: HistoryState, source: Source): Promise<void> {
  const folder = join(source.sessionDir, "subagents");
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names.sort()) {
    if (!name.endsWith(".jsonl")) continue;
    const path = join(folder, name);
    if (state.sources.some((known) => known.path === path)) continue;
    const agent = basename(name, ".jsonl");
    state.sources.push(newSource(path, join(folder, agent), agent));
  }
}

function resetAll(state: HistoryState): void {
  state.items.clear();
  state.index = createIndex(state.engine);
  state.sources = [state.sources[0]!];
  const first = state.sources[0]!;
  state.sources[0] = newSource(first.path, first.sessionDir, undefined);
}

async function search(
  state: HistoryState,
  query: string,
  options: HistorySearchOptions,
): Promise<HistoryHit[]> {
  await refresh(state);
  const limit = Math.min(Math.max(1, Math.floor(options.limit ?? DEFAULT_HITS)), MAX_HITS);
  const tool = options.tool?.toLowerCase();
  const from = options.turns?.from ?? Number.NEGATIVE_INFINITY;
  const to = options.turns?.to ?? Number.POSITIVE_INFINITY;
  const keep = (record: ItemRecord): boolean =>
    (tool === undefined || record.tool?.toLowerCase() === tool) &&
    (options.path === undefined || (record.subject?.includes(options.path) ?? false)) &&
    (options.kind === undefined || record.kind === options.kind) &&
    record.turn >= from &&
    record.turn <= to;
  const results = state.index.search(query, {
    filter: (result) => {
      const record = state.items.get(String(result.id));
      return record !== undefined && keep(record);
    },
    boostDocument: (id) => (state.items.get(String(id))?.kind === "user" ? USER_MESSAGE_BOOST : 1),
  });
  const tokenize = state.engine.getDefault("tokenize") as (text: string) => string[];
  const terms = tokenize(query.toLowerCase()).filter((term) => term.length > 0);
  const hits: HistoryHit[] = [];
  for (const result of results.slice(0, limit)) {
    const record = state.items.get(String(result.id))!;
    const text = (await itemText(state, record)) ?? "";
    hits.push({
      ...describe(record),
      score: result.score,
      excerpt: excerpt(text, terms),
      chars: text.length,
    });
  }
  return hits;
}

function describe(
  record: ItemRecord,
): Pick<HistoryHit, "id" | "kind" | "turn" | "tool" | "agent" | "isError"> {
  return {
    id: record.id,
    kind: record.kind,
    turn: record.turn,
    ...(record.tool === undefined ? {} : { tool: record.tool }),
    ...(record.agent === undefined ? {} : { agent: record.agent }),
    ...(record.isError ? { isError: true } : {}),
  };
}

/** About `EXCERPT_CHARS` of the text around the first matching term, whitespace folded to single spaces. */
function excerpt(text: string, terms: readonly string[]): string {
  const lower = text.toLowerCase();
  let at = -1;
  for (const term of terms) {
    const found = lower.indexOf(term);
    if (found !== -1 && (at === -1 || found < at)) at = found;
  }
  const start = Math.max(0, at - EXCERPT_CHARS / 3);
  const slice = text
    .slice(start, start + EXCERPT_CHARS)
    .replace(/\s+/g, " ")
    .trim();
  return `${start > 0 ? "…" : ""}${slice}${start + EXCERPT_CHARS < text.length ? "…" : ""}`;
}

async function read(state: HistoryState, id: string, options: HistoryReadOptions): Promise<HistoryPage> {
  let record = state.items.get(id);
  if (record === undefined) {
    await refresh(state);
    record = state.items.get(id);
  }
  let listing: UserRangeListing | undefined;
  if (record === undefined) {
    // A range of the user's messages (`first..last`, what a summary's fold names) reads as their listing.
    const range = parseUserRange(id);
    listing = range && (await userRangeListing(state.items, range, (item) => itemText(state, item)));
    record = listing?.record;
  }
  if (record === undefined) throw new HistoryItemNotFoundError(id);
  const text = listing?.text ?? (await itemText(state, record)) ?? "";
  const offset = options.offset ?? 0;
  const limit = options.limit ?? DEFAULT_PAGE_CHARS;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > text.length) {
    throw new HistoryRangeError(
      `The offset ${offset} is outside item "${id}", which has ${text.length} characters: give a whole number from 0 to ${text.length}.`,
      { itemId: id, totalChars: text.length },
    );
  }
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new HistoryRangeError(`The limit ${limit} must be a whole number of characters, at least 1.`, {
      itemId: id,
      totalChars: text.length,
    });
  }
  let end = Math.min(text.length, offset + limit);
  // Never split a surrogate pair: the pages joined must be the original text.
  if (end < text.length && end > offset + 1 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  const page: HistoryPage = {
    ...describe(record),
    ...(listing ? { id } : {}),
    text: text.slice(offset, end),
    offset,
    totalChars: text.length,
  };
  if (listing === undefined && record.call !== undefined) {
    const call = await blockAt(state, record.call);
    if (call?.type === "tool_use") page.input = call.input;
  }
  if (end < text.length) page.nextOffset = end;
  return page;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

async function itemText(state: HistoryState, record: ItemRecord): Promise<string | undefined> {
  if (record.at.part === -1) {
    const entry = await entryAt(state, record.at);
    return isRecord(entry) && typeof entry.text === "string" ? entry.text : undefined;
  }
  return blockText(await blockAt(state, record.at));
}

async function blockAt(state: HistoryState, at: ItemLocation) {
  const entry = await entryAt(state, at);
  if (!isRecord(entry) || !isRecord(entry.message)) return undefined;
  const content = entry.message.content;
  // A writer may have stored text content as a string: it stands for one text block.
  if (typeof content === "string")
    return at.part === 0 ? { type: "text" as const, text: content } : undefined;
  return Array.isArray(content) ? (content[at.part] as Parameters<typeof blockText>[0]) : undefined;
}

/** The transcript line an item is on, parsed again from its bytes. */
async function entryAt(state: HistoryState, at: ItemLocation): Promise<unknown> {
  const source = state.sources[at.source];
  if (source === undefined) return undefined;
  const handle = await open(source.path, "r");
  try {
    const bytes = new Uint8Array(at.end - at.start);
    await handle.read(bytes, 0, bytes.length, at.start);
    return JSON.parse(new TextDecoder().decode(bytes).trim());
  } finally {
    await handle.close();
  }
}
