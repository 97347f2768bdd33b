import MiniSearch from "minisearch";
import { type MemoryEntry, searchTerms } from "./memory-catalog.ts";
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
  /** Most documents handed to the BM25 index; beyond it, those matching the rarest terms win. Default 2,000. */
  maxCandidates?: number;
}

const BM25 = { k: 1.2, b: 0.7, d: 0.5 };

function inverseDocumentFrequency(total: number, matching: number): number {
  return Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
}

/**
 * The local BM25 pre-filter (and the offline retrieval fallback). A linear pass over the catalog's term
 * lists finds the memories containing a query term and counts each term's document frequency over the whole
 * dir; MiniSearch then scores only those candidates with BM25, each term boosted back to its corpus-wide IDF
 * and each memory weighted by its decay factor. Building an index of every memory per query would cost far
 * more than this pass; the result is the same BM25 ranking.
 */
export function prefilterMemories(
  entries: readonly MemoryEntry[],
  query: string,
  options: PrefilterOptions = {},
): ScoredMemory[] {
  const queryTerms = searchTerms(query);
  if (queryTerms.length === 0) return [];
  const usable = entries.filter(
    (entry) =>
      entry.problem === undefined &&
      !options.exclude?.has(entry.name) &&
      (options.includeSuperseded || entry.supersededBy === undefined),
  );
  const needles = queryTerms.map((term) => ` ${term} `);
  const documentFrequency = new Array<number>(queryTerms.length).fill(0);
  const candidates: Array<{ entry: MemoryEntry; matched: number[] }> = [];
  for (const entry of usable) {
    const haystack = ` ${entry.terms} `;
    let matched: number[] | undefined;
    for (let index = 0; index < needles.length; index++) {
      if (haystack.includes(needles[index] as string)) {
        documentFrequency[index] = (documentFrequency[index] ?? 0) + 1;
        if (!matched) matched = [];
        matched.push(index);
      }
    }
    if (matched) candidates.push({ entry, matched });
  }
  if (candidates.length === 0) return [];
  const trueIdf = documentFrequency.map((frequency) => inverseDocumentFrequency(usable.length, frequency));
  let pool = candidates;
  const maxCandidates = options.maxCandidates ?? 2_000;
  if (pool.length > maxCandidates) {
    const weight = (candidate: (typeof pool)[number]) =>
      candidate.matched.reduce((sum, index) => sum + (trueIdf[index] ?? 0), 0);
    pool = [...pool].sort((a, b) => weight(b) - weight(a)).slice(0, maxCandidates);
  }
  const poolFrequency = new Array<number>(queryTerms.length).fill(0);
  for (const candidate of pool)
    for (const index of candidate.matched) poolFrequency[index] = (poolFrequency[index] ?? 0) + 1;
  const termIndex = new Map(queryTerms.map((term, index) => [term, index]));
  const decays = new Map(pool.map(({ entry }) => [entry.name, explainDecay(entry, options)]));
  const index = new MiniSearch<{ id: string; terms: string }>({
    fields: ["terms"],
    idField: "id",
    tokenize: (text) => text.split(" "),
    processTerm: (term) => term || null,
  });
  index.addAll(pool.map(({ entry }) => ({ id: entry.name, terms: entry.terms })));
  const results = index.search(queryTerms.join(" "), {
    combineWith: "OR",
    bm25: BM25,
    tokenize: (text) => text.split(" "),
    processTerm: (term) => term || null,
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
