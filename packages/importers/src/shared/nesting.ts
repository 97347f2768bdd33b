/**
 * The deepest nesting of arrays and objects the importers keep. Source values are copied into messages and
 * entries, which are later serialised (`JSON.stringify` recurses and overflows the stack at a few thousand
 * levels); real agent data stays below 30 levels, so deeper values are reported instead of imported.
 */
export const MAX_NESTING = 256;

/**
 * Whether a value nests arrays or objects deeper than `limit` (default `MAX_NESTING`). Iterative (no recursion to overflow) and
 * linear: each object is visited once, so shared or cyclic references in a caller's parsed value cannot make
 * it loop.
 */
export function exceedsNesting(value: unknown, limit: number = MAX_NESTING): boolean {
  if (typeof value !== "object" || value === null) return false;
  const seen = new Set<object>();
  const stack: { value: object; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (depth > limit) return true;
    if (seen.has(current)) continue;
    seen.add(current);
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
