import type { RE2JS } from "re2js";
import { bracket, closingIndex, literal, rangeMembers, splitTopLevel, unsupported } from "./glob-pieces.ts";
import { re2 } from "./re2.ts";

/**
 * Name patterns (Glob's and Grep's globs, `.gitignore` lines) are translated to RE2's syntax and run by
 * re2js, a port of RE2: its matching time grows with the length of the name times the size of the pattern,
 * never exponentially, so no pattern can hold the event loop. A backtracking matcher (picomatch's regular
 * expressions) took 30 s for `*a*a*a*a*b` against a 250-character name of `a`s.
 */

/** True when a path (relative, with `/`) matches. */
export type PathMatcher = (path: string) => boolean;

/** How a pattern is read: a shell glob as picomatch reads it, or a `.gitignore` line as git's wildmatch does. */
interface Syntax {
  /** `{a,b}` and `{1..3}` alternatives. */
  braces: boolean;
  /** `@(a|b)`, `?(…)`, `*(…)`, `+(…)` and plain `(a|b)` groups. */
  extglobs: boolean;
  /** `**` followed by more of the segment (`**.js`) crosses folders, as picomatch reads it; git reads a plain `*`. */
  globstarPrefix: boolean;
  /** A trailing `/**` also matches the folder itself (picomatch); in a `.gitignore` it matches only what is inside. */
  trailingGlobstarMatchesFolder: boolean;
}

const GLOB: Syntax = {
  braces: true,
  extglobs: true,
  globstarPrefix: true,
  trailingGlobstarMatchesFolder: true,
};
const GITIGNORE: Syntax = {
  braces: false,
  extglobs: false,
  globstarPrefix: false,
  trailingGlobstarMatchesFolder: false,
};

/** Longest pattern taken: matching time grows with it, and no real glob comes near it. */
export const MAX_PATTERN_CHARS = 4_096;
interface Part {
  /** The part starts a path segment (the pattern's start, or right after a `/`). */
  segmentStart: boolean;
  /** The part ends a path segment (the pattern's end, or right before a `/`). */
  segmentEnd: boolean;
}

/** One translation of `pattern[from, to)`: what every step reads. */
interface Translation {
  pattern: string;
  from: number;
  to: number;
  part: Part;
  syntax: Syntax;
  budget: { members: number };
}

/** A translated piece of the pattern and the index just past it. */
interface Step {
  source: string;
  next: number;
}

function atSegmentStart(t: Translation, index: number): boolean {
  return index === t.from ? t.part.segmentStart : t.pattern[index - 1] === "/";
}

function atSegmentEnd(t: Translation, index: number): boolean {
  return index === t.to ? t.part.segmentEnd : t.pattern[index] === "/";
}

/** The group `pattern[open] … pattern[close]` as alternatives split at `separator`, then `quantifier`. */
function translateGroup(
  t: Translation,
  open: number,
  close: number,
  separator: string,
  quantifier: string,
): Step {
  const alternatives = splitTopLevel(t.pattern, open + 1, close, separator).map(([start, stop]) =>
    translate(
      t.pattern,
      start,
      stop,
      { segmentStart: atSegmentStart(t, open), segmentEnd: atSegmentEnd(t, close + 1) },
      t.syntax,
      t.budget,
    ),
  );
  return { source: `(?:${alternatives.join("|")})${quantifier}`, next: close + 1 };
}

/** An extglob `@(…)`, `?(…)`, `*(…)` or `+(…)` at `index`, or undefined when the group is not closed. */
function translateExtglob(t: Translation, index: number, character: string): Step | undefined {
  const close = closingIndex(t.pattern, index + 1, t.to);
  if (close === -1) return undefined;
  if (character === "!") {
    throw unsupported(
      t.pattern,
      `a negated group "!(…)" is not supported; match what you want positively (Grep's glob also takes "!pattern" to leave files out).`,
    );
  }
  return translateGroup(t, index + 1, close, "|", character === "@" ? "" : character);
}

/** A run of `*` at `index`: `**` as a whole segment crosses folders, anything else stays within one. */
function translateStars(t: Translation, index: number): Step {
  let stars = index;
  while (t.pattern[stars] === "*" && stars < t.to) stars++;
  if (stars - index >= 2 && atSegmentStart(t, index)) {
    if (atSegmentEnd(t, stars)) {
      // `**/`: any number of folders, none included.
      return stars < t.to ? { source: "(?:.*/)?", next: stars + 1 } : { source: ".*", next: stars };
    }
    if (t.syntax.globstarPrefix) return { source: "(?:.*/)?[^/]*", next: stars };
  }
  return { source: "[^/]*", next: stars };
}

/** A `/` at `index`, with a trailing `/**` after it. */
function translateSlash(t: Translation, index: number): Step {
  let stars = index + 1;
  while (t.pattern[stars] === "*" && stars < t.to) stars++;
  if (stars - index - 1 >= 2 && stars === t.to && t.part.segmentEnd) {
    // A trailing `/**`: everything inside the folder (and, for picomatch, the folder itself).
    return { source: t.syntax.trailingGlobstarMatchesFolder ? "(?:/.*)?" : "/.+", next: stars };
  }
  return { source: "/", next: index + 1 };
}

/** Braces at `index`: alternatives `{a,b}` or a range `{1..3}`, or undefined when they are neither. */
function translateBraces(t: Translation, index: number): Step | undefined {
  const close = closingIndex(t.pattern, index, t.to);
  if (close === -1) return undefined;
  if (splitTopLevel(t.pattern, index + 1, close, ",").length > 1)
    return translateGroup(t, index, close, ",", "");
  const members = rangeMembers(t.pattern.slice(index + 1, close), t.budget, t.pattern);
  if (members === undefined) return undefined;
  return {
    source: `(?:${members.map((member) => [...member].map(literal).join("")).join("|")})`,
    next: close + 1,
  };
}

/** The special piece at `index`, or undefined when the character there stands for itself. */
function translateSpecial(t: Translation, index: number): Step | undefined {
  const { pattern, syntax } = t;
  const character = pattern[index] ?? "";
  if (character === "\\") {
    return { source: index + 1 < t.to ? literal(pattern[index + 1] ?? "") : "\\\\", next: index + 2 };
  }
  if (syntax.extglobs && "@?*+!".includes(character) && pattern[index + 1] === "(") {
    const step = translateExtglob(t, index, character);
    if (step !== undefined) return step;
  }
  if (character === "*") return translateStars(t, index);
  if (character === "/") return translateSlash(t, index);
  if (character === "?") return { source: "[^/]", next: index + 1 };
  if (character === "[") {
    const translated = bracket(pattern, index, t.to);
    if (translated !== undefined) return translated;
  }
  if (syntax.braces && character === "{") {
    const step = translateBraces(t, index);
    if (step !== undefined) return step;
  }
  if (syntax.extglobs && character === "(") {
    const close = closingIndex(pattern, index, t.to);
    if (close !== -1) return translateGroup(t, index, close, "|", "");
  }
  return undefined;
}

/** `pattern[from, to)` in RE2's syntax. */
function translate(
  pattern: string,
  from: number,
  to: number,
  part: Part,
  syntax: Syntax,
  budget: { members: number },
): string {
  const t: Translation = { pattern, from, to, part, syntax, budget };
  let source = "";
  let index = from;
  while (index < to) {
    const step = translateSpecial(t, index);
    if (step !== undefined) {
      source += step.source;
      index = step.next;
      continue;
    }
    const character = pattern[index] ?? "";
    const code = character.codePointAt(0) ?? 0;
    const whole = code > 0xffff ? pattern.slice(index, index + 2) : character;
    source += literal(whole);
    index += whole.length;
  }
  return source;
}

function compile(source: string, pattern: string): RE2JS {
  try {
    return re2().compile(source);
  } catch (error) {
    throw unsupported(pattern, `it could not be compiled (${(error as Error).message}).`);
  }
}

function checkLength(pattern: string): void {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw unsupported(
      pattern,
      `it is ${pattern.length} characters long, more than the ${MAX_PATTERN_CHARS} a glob may have.`,
    );
  }
}

/**
 * A glob as picomatch reads it with `dot: true`, for relative paths with `/` (no `./`, no empty, `.` or `..`
 * segment, as a walk lists them): `*` and `?` within a segment, `**` across segments, `[…]` classes (never
 * `/`), `{a,b}` and `{1..9}`, `@(…)`, `?(…)`, `*(…)`, `+(…)`, `(a|b)`, `\` escapes and a leading `!`
 * (negation). With `matchBase`, a pattern without a `/` is matched against the file name only. Throws
 * `ToolCallError` for `!(…)` groups and patterns over `MAX_PATTERN_CHARS`.
 */
export function compileGlob(pattern: string, options: { matchBase?: boolean } = {}): PathMatcher {
  checkLength(pattern);
  let body = pattern;
  let negated = false;
  while (body.startsWith("!") && !body.startsWith("!(")) {
    negated = !negated;
    body = body.slice(1);
  }
  while (body.startsWith("./")) body = body.slice(2);
  const source = translate(body, 0, body.length, { segmentStart: true, segmentEnd: true }, GLOB, {
    members: 0,
  });
  const expression = compile(`^(?:${source})$`, pattern);
  const onName = options.matchBase === true && !body.includes("/");
  return (path) => {
    const subject = onName ? path.slice(path.lastIndexOf("/") + 1) : path;
    return expression.matches(subject) !== negated;
  };
}

/** Several globs, any of which may match. */
export function compileGlobs(
  patterns: readonly string[],
  options: { matchBase?: boolean } = {},
): PathMatcher {
  const matchers = patterns.map((pattern) => compileGlob(pattern, options));
  return (path) => matchers.some((matches) => matches(path));
}

/** The literal folders a glob starts with (where a walk may begin) and the rest. */
export function splitGlobBase(pattern: string): { base: string; glob: string; isGlob: boolean } {
  const segments = pattern.split("/");
  let literalCount = 0;
  // The last segment is what is matched: only the folders before it can be a base.
  while (literalCount < segments.length - 1 && !/[*?[\]{}()!@+\\]/.test(segments[literalCount] ?? "")) {
    literalCount++;
  }
  const isGlob = /[*?[\]{}()!@+\\]/.test(pattern);
  if (!isGlob) return { base: pattern, glob: "", isGlob: false };
  return {
    base: segments.slice(0, literalCount).join("/"),
    glob: segments.slice(literalCount).join("/"),
    isGlob: true,
  };
}

/** One line of a `.gitignore`. */
export interface GitignoreRule {
  /** `!pattern`: a match re-includes the path. */
  negated: boolean;
  /** `pattern/`: matches folders only. */
  foldersOnly: boolean;
  /** The RE2 source of the pattern, for a path relative to the file's folder. */
  source: string;
}

/**
 * A `.gitignore` line as git reads it (gitignore(5)): blank lines and `#` comments are skipped, trailing
 * spaces are dropped unless escaped, `!` negates, a trailing `/` means folders only, a `/` at the start or in
 * the middle anchors the pattern to the file's folder (otherwise it matches at any depth), `**` matches
 * across folders as a whole segment and is a plain `*` elsewhere. Undefined for a line with no pattern, or
 * one that cannot be used (too long): git would not match it either.
 */
export function parseGitignoreLine(line: string): GitignoreRule | undefined {
  let text = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (text === "" || text.startsWith("#") || text.length > MAX_PATTERN_CHARS) return undefined;
  // Trailing spaces go, unless the last one is escaped.
  let end = text.length;
  while (end > 0 && text[end - 1] === " ") {
    let backslashes = 0;
    while (end - 2 - backslashes >= 0 && text[end - 2 - backslashes] === "\\") backslashes++;
    if (backslashes % 2 === 1) break;
    end--;
  }
  text = text.slice(0, end);
  const negated = text.startsWith("!");
  if (negated) text = text.slice(1);
  const foldersOnly = text.endsWith("/") && !text.endsWith("\\/");
  if (foldersOnly) text = text.replace(/\/+$/, "");
  if (text === "") return undefined;
  const anchored = text.includes("/");
  if (text.startsWith("/")) text = text.slice(1);
  // `/**` alone: everything, as `**` is.
  if (/^\*\*+$/.test(text)) return { negated, foldersOnly, source: ".*" };
  const body = translate(text, 0, text.length, { segmentStart: true, segmentEnd: true }, GITIGNORE, {
    members: 0,
  });
  return { negated, foldersOnly, source: anchored ? body : `(?:.*/)?${body}` };
}

/** The rules of one ignore file, to ask which one decides a path (the last that matches wins, as in git). */
export interface GitignoreRules {
  /** `ignored` or `included` when a rule matches `relativePath`, undefined when none does. */
  decide(relativePath: string, isFolder: boolean): "ignored" | "included" | undefined;
}

/**
 * Compiles the rules of an ignore file. All its rules go into one expression per kind of path, which answers
 * the usual question (does any rule match?) in one pass; only a path that some rule matches is tried rule by
 * rule, from the last. Rules are matched ignoring case, as the `ignore` package did before (a macOS or Windows
 * checkout, where git sets `core.ignoreCase`, behaves the same).
 */
export function compileGitignore(text: string): GitignoreRules | undefined {
  const rules = text.split("\n").flatMap((line) => {
    const rule = parseGitignoreLine(line);
    if (rule === undefined) return [];
    try {
      return [{ ...rule, expression: re2().compile(`(?i)^(?:${rule.source})$`) }];
    } catch {
      return [];
    }
  });
  if (rules.length === 0) return undefined;
  const any = (kept: typeof rules) =>
    kept.length === 0 ? undefined : re2().compile(`(?i)^(?:${kept.map((rule) => rule.source).join("|")})$`);
  const forFolders = any(rules);
  const forFiles = any(rules.filter((rule) => !rule.foldersOnly));
  return {
    decide(relativePath, isFolder) {
      const screen = isFolder ? forFolders : forFiles;
      if (screen === undefined || !screen.matches(relativePath)) return undefined;
      for (let index = rules.length - 1; index >= 0; index--) {
        const rule = rules[index];
        if (rule === undefined || (rule.foldersOnly && !isFolder)) continue;
        if (rule.expression.matches(relativePath)) return rule.negated ? "included" : "ignored";
      }
      return undefined;
    },
  };
}
