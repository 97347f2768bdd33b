import { ToolCallError } from "../tool-errors.ts";

/**
 * The pieces of a name pattern that translate on their own: literals, brackets (`[a-z]`, `[[:alpha:]]`), brace
 * ranges (`{1..3}`), and finding where a bracket, brace or group closes. `glob-pattern.ts` puts them together.
 */

/** Members a `{1..N}` range may expand to, in one pattern. */
const MAX_RANGE_MEMBERS = 1_000;
/** The POSIX classes wildmatch and picomatch accept inside brackets; RE2 takes the same names. */
const POSIX_CLASSES = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit",
]);
const SLASH = 0x2f;

function codePoint(code: number): string {
  return `\\x{${code.toString(16)}}`;
}

/** A character as an RE2 literal. */
export function literal(character: string): string {
  return /[\\.+*?()|[\]{}^$]/.test(character) ? `\\${character}` : character;
}

export function unsupported(pattern: string, reason: string): ToolCallError {
  const shown = pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern;
  return new ToolCallError(`The glob ${JSON.stringify(shown)} cannot be used: ${reason}`);
}

/** The index of the bracket, brace or parenthesis that closes the one at `open`, or -1. */
export function closingIndex(pattern: string, open: number, end: number): number {
  const opener = pattern[open];
  const closer = opener === "{" ? "}" : ")";
  let depth = 0;
  for (let index = open; index < end; index++) {
    const character = pattern[index];
    if (character === "\\") index++;
    else if (character === opener) depth++;
    else if (character === closer && --depth === 0) return index;
  }
  return -1;
}

/** Splits `pattern[from, to)` at `separator`s outside nested braces and parentheses (escapes kept). */
export function splitTopLevel(
  pattern: string,
  from: number,
  to: number,
  separator: string,
): [number, number][] {
  const parts: [number, number][] = [];
  let depth = 0;
  let start = from;
  for (let index = from; index < to; index++) {
    const character = pattern[index];
    if (character === "\\") index++;
    else if (character === "{" || character === "(") depth++;
    else if (character === "}" || character === ")") depth--;
    else if (character === separator && depth === 0) {
      parts.push([start, index]);
      start = index + 1;
    }
  }
  parts.push([start, to]);
  return parts;
}

/** A bracket expression at `open` as an RE2 class that never matches `/`, or undefined when it is not closed. */
export function bracket(
  pattern: string,
  open: number,
  end: number,
): { source: string; next: number } | undefined {
  let index = open + 1;
  const negated = pattern[index] === "!" || pattern[index] === "^";
  if (negated) index++;
  const ranges: [number, number][] = [];
  const posix: string[] = [];
  let first = true;
  const member = (): number | undefined => {
    let character = pattern[index];
    if (character === "\\" && index + 1 < end) character = pattern[++index];
    if (character === undefined) return undefined;
    const code = character.codePointAt(0) ?? 0;
    index += code > 0xffff ? 2 : 1;
    return code;
  };
  while (index < end) {
    if (pattern[index] === "]" && !first) {
      const kept: string[] = [];
      for (const [low, high] of ranges) {
        // A class never matches the folder separator, whatever its members say (git's wildmatch, picomatch).
        if (low <= SLASH && SLASH <= high && !negated) {
          if (low < SLASH) kept.push(`${codePoint(low)}-${codePoint(SLASH - 1)}`);
          if (high > SLASH) kept.push(`${codePoint(SLASH + 1)}-${codePoint(high)}`);
        } else {
          kept.push(low === high ? codePoint(low) : `${codePoint(low)}-${codePoint(high)}`);
        }
      }
      const members = [...kept, ...posix.map((name) => `[:${name}:]`)].join("");
      if (negated) return { source: `[^/${members}]`, next: index + 1 };
      // RE2 has no empty class; this one matches no character at all.
      return { source: members === "" ? "[^\\x00-\\x{10ffff}]" : `[${members}]`, next: index + 1 };
    }
    first = false;
    const posixClass = /^\[:([a-z]+):\]/.exec(pattern.slice(index, index + 10));
    if (posixClass !== null && POSIX_CLASSES.has(posixClass[1] ?? "")) {
      posix.push(posixClass[1] ?? "");
      index += posixClass[0].length;
      continue;
    }
    const low = member();
    if (low === undefined) return undefined;
    if (pattern[index] === "-" && index + 1 < end && pattern[index + 1] !== "]") {
      index++;
      const high = member();
      if (high === undefined) return undefined;
      // A reversed range matches nothing, as in git and bash.
      if (low <= high) ranges.push([low, high]);
      continue;
    }
    ranges.push([low, low]);
  }
  return undefined;
}

/** `{1..3}`, `{01..10..3}`, `{a..e}` as their members, or undefined when the braces hold no range. */
export function rangeMembers(
  inner: string,
  budget: { members: number },
  pattern: string,
): string[] | undefined {
  const numeric = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(inner);
  const letters = /^([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?$/.exec(inner);
  const match = numeric ?? letters;
  if (match === null) return undefined;
  const [, from = "", to = "", stepText] = match;
  const start = numeric ? Number(from) : from.charCodeAt(0);
  const stop = numeric ? Number(to) : to.charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(stepText ?? 1)) || 1);
  const count = Math.floor(Math.abs(stop - start) / step) + 1;
  budget.members += count;
  if (!Number.isSafeInteger(count) || budget.members > MAX_RANGE_MEMBERS) {
    throw unsupported(
      pattern,
      `its {…..…} ranges expand to more than ${MAX_RANGE_MEMBERS} names; use a wildcard (e.g. "file-*" instead of "file-{1..5000}").`,
    );
  }
  // {01..10}: a leading zero pads every member to the longest width, as bash does.
  const width = numeric && /^-?0\d/.test(from + to) ? Math.max(from.length, to.length) : 0;
  const members: string[] = [];
  const direction = stop >= start ? step : -step;
  for (let value = start, left = count; left > 0; value += direction, left--) {
    members.push(numeric ? String(value).padStart(width, "0") : String.fromCharCode(value));
  }
  return members;
}
