/** Case, "-" and "_" differences are the commonest slips in hand-written event names. */
function normalized(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, "");
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}

/**
 * The candidate a misspelt name most likely meant: the nearest by edit distance after ignoring case, "-" and
 * "_", when it is close enough to be a slip (a third of the name's length, at least 2); else undefined.
 * A distance of 0 means the two differ only in case or separators.
 */
export function closestName(
  name: string,
  candidates: Iterable<string>,
): { name: string; distance: number } | undefined {
  const wanted = normalized(name);
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, normalized(candidate));
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  const tolerance = Math.max(2, Math.floor(wanted.length / 3));
  return best !== undefined && best.distance <= tolerance ? best : undefined;
}
