// Exports the guard tests call in a worker: some settle, some never do. Plain JavaScript, so a worker loads it
// without a TypeScript loader (`typed-case.ts` covers that path).
import { ConfigurationError } from "@unforget/core";

export function add(a, b) {
  return a + b;
}

export async function later(text) {
  await new Promise((resolve) => setImmediate(resolve));
  return { text, length: text.length };
}

export function refuses(reason) {
  throw new ConfigurationError(reason);
}

/** A backtracking regular expression on a near-match: exponential in the length, never done in a test's life. */
export function backtracks(length) {
  return /^(a+)+$/.test(`${"a".repeat(length)}b`);
}

/** A synchronous loop that never ends. */
export function spins() {
  for (;;) {
    // Nothing: the worker's thread is held, as a hang holds it.
  }
}

/** A promise that never settles. */
export function waitsForever() {
  return new Promise(() => undefined);
}

export function returnsAFunction() {
  return () => undefined;
}
