import { clip } from "../conversation/conversation.ts";
import { QUOTE_CHARS } from "../defaults.ts";

/**
 * At most `limit` items, the most recent first in claim, oldest first in order; when some must go, an item whose
 * kind a more recent kept item already shows goes before an older one of a kind shown nowhere else.
 */
export function keepDistinct<T>(items: readonly T[], limit: number, kind: (item: T) => string): T[] {
  if (items.length <= limit) return [...items];
  const kept = new Set<number>();
  const kinds = new Set<string>();
  for (let index = items.length - 1; index >= 0 && kept.size < limit; index--) {
    const key = kind(items[index]!);
    if (kinds.has(key)) continue;
    kinds.add(key);
    kept.add(index);
  }
  for (let index = items.length - 1; index >= 0 && kept.size < limit; index--) kept.add(index);
  return items.filter((_, index) => kept.has(index));
}

export function joinLines(parts: readonly (string | undefined)[]): string {
  return parts.filter((part): part is string => part !== undefined && part.length > 0).join("\n");
}

/** Previous lines first, then new ones not already there, the most recent `limit` kept. */
export function mergeLines(
  previous: string | undefined,
  lines: readonly string[],
  limit: number,
  kind?: (line: string) => string,
): string {
  const carried = previous
    ? previous
        .split("\n")
        .filter(
          (line) =>
            line.startsWith("- ") && !line.includes("(nothing recorded)") && !line.startsWith("- None"),
        )
    : [];
  const merged = [...carried.filter((line) => !lines.includes(line)), ...lines];
  const room = Math.max(limit, lines.length);
  return (kind ? keepDistinct(merged, room, kind) : merged.slice(-room)).join("\n");
}

/** Like `mergeLines`, but a new line replaces an earlier one with the same key. */
export function mergeByKey(
  previous: string | undefined,
  lines: readonly string[],
  limit: number,
  key: (line: string) => string,
): string[] {
  const fresh = new Set(lines.map(key));
  const carried = previous
    ? previous
        .split(/\n(?=- )/)
        .filter(
          (line) => line.startsWith("- ") && !line.includes("(nothing recorded)") && !fresh.has(key(line)),
        )
    : [];
  return [...carried.slice(-limit), ...lines];
}

/** An earlier summary's section carried forward: at most `maxLines` lines, each cut to a quote's length. */
export function carry(text: string, maxLines: number): string {
  const lines = text.split("\n").map((line) => clip(line, QUOTE_CHARS));
  return lines.length <= maxLines ? lines.join("\n") : [...lines.slice(0, maxLines), "…"].join("\n");
}
