import MiniSearch from "minisearch";
import {
  catalogCount,
  catalogGeneration,
  type MemoryEntry,
  parseCatalogLine,
  searchIndexCount,
  searchTerms,
} from "../store/memory-catalog.ts";
import { type DecayExplanation, type DecayOptions, explainDecay } from "./memory-decay.ts";

/** A memory with the scores that ranked it. */
export interface ScoredMemory {
  entry: MemoryEntry;
  /** BM25 score of the query against its name, description, type and headings (corpus-wide IDF). */
  bm25: number;
  decay: DecayExplanation;
  /** `bm25 × decay.factor`: the ranking. */
  score: number;
}

export interface PrefilterOptions extends DecayOptions {
  /** How many to return. Default 20. */
  limit?: number;
  /** Names to leave out (already shown this session). */
  exclude?: ReadonlySet<string>;
  /** Rank superseded memories too (they are left out by default: a newer memory replaces them). */
  includeSuperseded?: boolean;
  /** Most documents handed to the BM25 index; beyond it, those matching the rarest terms win. Default 300. */
  maxCandidates?: number;
}

const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
/** A query term in more than this share of the memories does not pick candidates (it still scores them). */
const SELECTIVE_SHARE = 0.05;

function inverseDocumentFrequency(total: number, matching: number): number {
  return Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
}

interface Candidate {
  entry: MemoryEntry;
  /** Indexes (into the query terms) of the terms the memory holds. */
  matched: number[];
}

function usable(entry: MemoryEntry, options: PrefilterOptions): boolean {
  return (
    entry.problem === undefined &&
    !options.exclude?.has(entry.name) &&
    (options.includeSuperseded === true || entry.supersededBy === undefined)
  );
}

/**
 * BM25 over the candidates with MiniSearch: each term boosted back to its IDF over the whole store (so the
 * ranking is the corpus-wide one, not the candidates'), each memory weighted by its decay factor.
 */
function rank(
  queryTerms: string[],
  candidates: Candidate[],
  documentFrequency: number[],
  total: number,
  options: PrefilterOptions,
): ScoredMemory[] {
  if (candidates.length === 0) return [];
  const trueIdf = documentFrequency.map((frequency) => inverseDocumentFrequency(total, frequency));
  let pool = candidates;
  const maxCandidates = options.maxCandidates ?? 300;
  if (pool.length > maxCandidates) {
    const weight = (candidate: Candidate) =>
      candidate.matched.reduce((sum, index) => sum + (trueIdf[index] ?? 0), 0);
    pool = [...pool].sort((a, b) => weight(b) - weight(a)).slice(0, maxCandidates);
  }
  const poolFrequency = new Array<number>(queryTerms.length).fill(0);
  for (const candidate of pool) {
    for (const index of candidate.matched) poolFrequency[index] = (poolFrequency[index] ?? 0) + 1;
  }
  const termIndex = new Map(queryTerms.map((term, index) => [term, index]));
  const decays = new Map(pool.map(({ entry }) => [entry.name, explainDecay(entry, options)]));
  const split = (text: string) => text.split(" ");
  const keep = (term: string) => term || null;
  const index = new MiniSearch<{ id: string; terms: string }>({
    fields: ["terms"],
    idField: "id",
    tokenize: split,
    processTerm: keep,
  });
  index.addAll(pool.map(({ entry }) => ({ id: entry.name, terms: entry.terms })));
  const results = index.search(queryTerms.join(" "), {
    combineWith: "OR",
    bm25: BM25,
    tokenize: split,
    processTerm: keep,
    boostTerm: (term) => {
      const at = termIndex.get(term);
      if (at === undefined) return 1;
      const local = inverseDocumentFrequency(pool.length, poolFrequency[at] ?? 0);
      return local > 0 ? (trueIdf[at] ?? 0) / local : 1;
    },
    // Never 0: MiniSearch drops a document boosted by 0, and age or relevance only ever demote.
    boostDocument: (id: string) => Math.max(decays.get(id)?.factor ?? 1, 1e-6),
  });
  const byName = new Map(pool.map(({ entry }) => [entry.name, entry]));
  return results.slice(0, options.limit ?? 20).map((result) => {
    const decay = decays.get(result.id as string) as DecayExplanation;
    const entry = byName.get(result.id as string) as MemoryEntry;
    return { entry, bm25: result.score / Math.max(decay.factor, 1e-6), decay, score: result.score };
  });
}

/**
 * The local BM25 pre-filter (and the offline retrieval fallback) over catalog entries: memories holding a
 * query term are the candidates, ranked by BM25 with corpus-wide IDF and weighted by decay.
 */
export function prefilterMemories(
  entries: readonly MemoryEntry[],
  query: string,
  options: PrefilterOptions = {},
): ScoredMemory[] {
  const queryTerms = searchTerms(query);
  if (queryTerms.length === 0) return [];
  const live = entries.filter((entry) => usable(entry, options));
  const frequency = new Array<number>(queryTerms.length).fill(0);
  const candidates: Candidate[] = [];
  for (const entry of live) {
    const haystack = ` ${entry.terms} `;
    const matched: number[] = [];
    queryTerms.forEach((term, index) => {
      if (haystack.includes(` ${term} `)) {
        matched.push(index);
        frequency[index] = (frequency[index] ?? 0) + 1;
      }
    });
    if (matched.length > 0) candidates.push({ entry, matched });
  }
  return rank(queryTerms, candidates, frequency, live.length, options);
}

/** Start offsets of the lines of `text` containing `needle`, each line once (the scan skips to the next line after a hit). */
function linesContaining(text: string, needle: string): number[] {
  const starts: number[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf(needle, from);
    if (at === -1) return starts;
    starts.push(text.lastIndexOf("\n", at) + 1);
    const end = text.indexOf("\n", at);
    if (end === -1) return starts;
    from = end + 1;
  }
}

/** A catalog text and the search text derived from it (`formatSearchIndex`). */
export interface CatalogTexts {
  catalog: string;
  search: string;
}

/**
 * The same pre-filter over a store's catalog files, for large stores: each query term is found with
 * `indexOf` over the compact search text (its document frequency is the number of lines holding it); terms
 * held by more than a twentieth of the memories do not pick candidates (they still score them); the
 * candidates are pre-ranked by the IDF of the terms they hold and only the best `maxCandidates` catalog lines
 * are parsed. A 10,000-memory catalog is never parsed as a whole. Returns `undefined` when the two texts do
 * not belong together (a writer replaced one between the reads): the caller parses the catalog instead.
 */
export function prefilterCatalogText(
  texts: CatalogTexts,
  query: string,
  options: PrefilterOptions = {},
): ScoredMemory[] | undefined {
  const total = catalogCount(texts.catalog);
  if (total === undefined || searchIndexCount(texts.search) !== total) return undefined;
  if (catalogGeneration(texts.search) !== catalogGeneration(texts.catalog)) return undefined;
  const queryTerms = searchTerms(query);
  if (total === 0 || queryTerms.length === 0) return [];
  const text = texts.search;
  const hits = queryTerms.map((term) => linesContaining(text, ` ${term} `));
  const frequency = hits.map((lines) => lines.length);
  const idf = frequency.map((count) => inverseDocumentFrequency(total, count));
  const selective = frequency.map((count) => count > 0 && count <= Math.max(50, total * SELECTIVE_SHARE));
  if (!selective.some(Boolean)) {
    // Only common words: the rarest of them picks the candidates.
    let rarest = -1;
    frequency.forEach((count, index) => {
      if (count > 0 && (rarest === -1 || count < (frequency[rarest] ?? 0))) rarest = index;
    });
    if (rarest === -1) return [];
    selective[rarest] = true;
  }
  const weight = new Map<number, number>();
  hits.forEach((lines, index) => {
    if (!selective[index]) return;
    for (const start of lines) weight.set(start, (weight.get(start) ?? 0) + (idf[index] ?? 0));
  });
  const maxCandidates = options.maxCandidates ?? 300;
  const excluded = options.exclude?.size ?? 0;
  const starts = [...weight.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, maxCandidates + excluded + 50)
    .map(([start]) => start);
  const candidates: Candidate[] = [];
  for (const start of starts) {
    const end = text.indexOf("\n", start);
    const searchLine = text.slice(start, end === -1 ? undefined : end);
    const tab = searchLine.lastIndexOf("\t");
    const offset = Number(searchLine.slice(tab + 1));
    const catalogEnd = texts.catalog.indexOf("\n", offset);
    if (texts.catalog[offset - 1] !== "\n") return undefined;
    const entry = parseCatalogLine(texts.catalog.slice(offset, catalogEnd === -1 ? undefined : catalogEnd));
    if (!entry || ` ${entry.terms} ` !== searchLine.slice(0, tab)) return undefined;
    if (!usable(entry, options)) continue;
    const haystack = ` ${entry.terms} `;
    const matched: number[] = [];
    queryTerms.forEach((term, index) => {
      if (haystack.includes(` ${term} `)) matched.push(index);
    });
    if (matched.length > 0) candidates.push({ entry, matched });
    if (candidates.length === maxCandidates) break;
  }
  return rank(queryTerms, candidates, frequency, total, options);
}
