// Loads the shared evaluation corpus for the fitting script and the benchmark. The corpus is read in place
// (UNFORGET_CORPUS_DIR or ../shared/corpus next to the repository), never copied into the repository.
// Sessions are imported with core's importers in bench/dataset.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export function corpusDirectory(): string {
  return process.env.UNFORGET_CORPUS_DIR ?? resolve(here, "../../../../shared/corpus");
}

function listFiles(directory: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...listFiles(path));
    else files.push(path);
  }
  return files;
}

export interface TextSample {
  /** Corpus-relative file the sample came from. */
  source: string;
  /** Kind of text: the corpus sub-folder (prose-en, code, cjk, …) or "session". */
  kind: string;
  text: string;
}

/** The text files of `corpus/text`, whole (licence and notice files skipped). */
export function loadTextFiles(): TextSample[] {
  const root = join(corpusDirectory(), "text");
  return listFiles(root)
    .filter((path) => !/\/(LICENSE|NOTICE|COPYRIGHT)[^/]*$/.test(path))
    .map((path) => ({
      source: relative(corpusDirectory(), path),
      kind: relative(root, path).split("/")[0] ?? "text",
      text: readFileSync(path, "utf8"),
    }));
}

/** Splits a text at line boundaries into chunks of roughly `targetChars` characters (deterministic). */
export function chunkText(text: string, targetChars: number): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + targetChars);
    if (end < text.length) {
      const newline = text.indexOf("\n", end);
      end = newline === -1 || newline - end > targetChars ? end : newline + 1;
    }
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}
