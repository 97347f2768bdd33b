import { createRequire } from "node:module";
import type { RE2JS } from "re2js";

let loaded: typeof RE2JS | undefined;

/**
 * re2js, loaded by the first pattern compiled rather than with the tools: it is 260 kB of code that a session
 * which never matches a name (no Glob, Grep, ignore file or path rule) would compile at start-up for nothing.
 * Loaded synchronously (its CommonJS build), because compiling a pattern is synchronous.
 */
export function re2(): typeof RE2JS {
  loaded ??= (createRequire(import.meta.url)("re2js") as typeof import("re2js")).RE2JS;
  return loaded;
}
