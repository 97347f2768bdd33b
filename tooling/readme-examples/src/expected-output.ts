import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The comment that turns a `console.log(...)` line of a ```ts run example into an assertion: the example must
 * print exactly the text after it as one line of its output, in the order of the example (U+2192 arrow).
 */
export const OUTPUT_ARROW = "// →";

export interface ExpectedLine {
  /** 1-based line of the code block the assertion is on. */
  line: number;
  /** The line the example must print (trailing whitespace ignored). */
  text: string;
}

/** The asserted lines of one example, and the arrow comments that cannot be checked (reported, never ignored). */
export function expectedOutput(code: string): { expected: ExpectedLine[]; problems: string[] } {
  const expected: ExpectedLine[] = [];
  const problems: string[] = [];
  code.split("\n").forEach((source, index) => {
    const line = index + 1;
    let at = source.indexOf(OUTPUT_ARROW);
    if (at < 0) return;
    // The first arrow after a complete call is the comment; earlier ones belong to the code (a string).
    while (at >= 0 && !/\)\s*;?\s*$/.test(source.slice(0, at))) at = source.indexOf(OUTPUT_ARROW, at + 1);
    const call = at < 0 ? "" : source.slice(0, at).trim();
    if (!call.startsWith("console.log(")) {
      problems.push(
        `line ${line}: a \`${OUTPUT_ARROW}\` comment asserts only on a one-line console.log(...) call: ${source.trim()}`,
      );
      return;
    }
    expected.push({
      line,
      text: source
        .slice(at + OUTPUT_ARROW.length)
        .replace(/^ /, "")
        .trimEnd(),
    });
  });
  return { expected, problems };
}

/**
 * Checks that every expected line was printed, as a whole line and in order (other lines may come between).
 * Returns a message about the first one that was not, or undefined when all were.
 */
export function findMissingOutput(expected: readonly ExpectedLine[], stdout: string): string | undefined {
  const printed = stdout.split(/\r?\n/).map((line) => line.trimEnd());
  let next = 0;
  for (const { line, text } of expected) {
    const found = printed.indexOf(text, next);
    if (found < 0) {
      const rest = printed.slice(next).join("\n");
      return `line ${line} expects the output line ${JSON.stringify(text)}, which was not printed${
        next > 0 ? " after the previous asserted line" : ""
      }. Printed${next > 0 ? " after it" : ""}:\n${rest}`;
    }
    next = found + 1;
  }
  return undefined;
}

export interface ReadmeLocation {
  readme: string;
  /** Where the example runs (its package imports itself by name from there). */
  directory: string;
}

export interface FileSystemView {
  exists(path: string): boolean;
  list(path: string): string[];
}

const realFileSystem: FileSystemView = {
  exists: existsSync,
  list: (path) => readdirSync(path).sort(),
};

/**
 * The READMEs whose examples run: the root one (from tooling/readme-examples, which depends on every package
 * and host library it shows), each `packages/*` and `packages/providers/*` README, and each `apps/*` README, where those folders exist.
 */
export function collectReadmes(root: string, files: FileSystemView = realFileSystem): ReadmeLocation[] {
  const readmes: ReadmeLocation[] = [];
  if (files.exists(join(root, "README.md"))) {
    readmes.push({ readme: join(root, "README.md"), directory: join(root, "tooling", "readme-examples") });
  }
  for (const folder of ["packages", "packages/providers", "apps"]) {
    if (!files.exists(join(root, folder))) continue;
    for (const name of files.list(join(root, folder))) {
      const readme = join(root, folder, name, "README.md");
      if (files.exists(readme)) readmes.push({ readme, directory: join(root, folder, name) });
    }
  }
  return readmes;
}
