import { searchTerms } from "./memory-catalog.ts";

/**
 * How alike two memory texts are, in [0, 1]: the overlap of their search terms (Jaccard), or 1 when one has
 * at least five terms and nearly all of them are in the other (the shorter one is contained in the longer).
 */
export function textSimilarity(a: string, b: string): number {
  const left = new Set(searchTerms(a));
  const right = new Set(searchTerms(b));
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const term of left) if (right.has(term)) shared++;
  const smaller = Math.min(left.size, right.size);
  if (smaller >= 5 && shared / smaller >= 0.9) return 1;
  return shared / (left.size + right.size - shared);
}
