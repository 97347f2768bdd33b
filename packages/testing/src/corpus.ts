import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigurationError } from "@unforget/core";

/** The session formats found in the corpus; "openhands-evaluation" files hold one instance per JSONL line. */
export type CorpusFormat =
  | "claude-code"
  | "swe-agent"
  | "mini-swe-agent"
  | "openhands"
  | "openhands-evaluation";

export interface CorpusSession {
  /** Absolute path of the file. */
  path: string;
  /** Path relative to the corpus folder, with forward slashes (stable across machines, for test names). */
  relativePath: string;
  format: CorpusFormat;
}

export const CORPUS_DIR_ENV = "UNFORGET_CORPUS_DIR";

/** A corpus folder and the sessions found in it. */
export interface Corpus {
  /** Absolute path of the folder. */
  dir: string;
  /** Every session file in it, sorted by relative path (`listCorpusSessions`). */
  sessions: CorpusSession[];
}

/**
 * Thrown by `evaluationCorpus()` when the evaluation corpus is not there: says where it looked and how to
 * point at it. A `ConfigurationError` (code "configuration", `setting` UNFORGET_CORPUS_DIR).
 */
export class CorpusMissingError extends ConfigurationError {
  /** The folder that was looked at. */
  readonly directory: string;

  constructor(directory: string, reason: string) {
    const where =
      process.env[CORPUS_DIR_ENV] !== undefined && process.env[CORPUS_DIR_ENV] !== ""
        ? `${CORPUS_DIR_ENV} points at ${directory}`
        : `looked for shared/corpus beside the repository, at ${directory}`;
    super(
      `The evaluation corpus is missing (${where}): ${reason}. Set ${CORPUS_DIR_ENV} to the corpus folder ` +
        `(for example ${CORPUS_DIR_ENV}=/path/to/shared/corpus pnpm eval), or run \`pnpm test\`, whose unit ` +
        "tests need no corpus.",
      { setting: CORPUS_DIR_ENV },
    );
    this.directory = directory;
  }
}

/**
 * The evaluation corpus (`corpusDir()`), checked: a folder holding sessions, or a `CorpusMissingError` that
 * says where it looked and how to point at it. Evaluation tests call it at the top of the file, so a missing
 * corpus fails the file with that message, locally and in CI alike: it never skips.
 */
export function evaluationCorpus(): Corpus {
  const dir = corpusDir();
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CorpusMissingError(dir, "no such folder");
  const sessions = listCorpusSessions(dir);
  if (sessions.length === 0) throw new CorpusMissingError(dir, "the folder holds no session file");
  return { dir, sessions };
}

/**
 * The sample corpus that ships with this kit: a few small sessions of every format the importers read,
 * texts of each class the token estimator knows and recorded-stream shapes of the Anthropic Messages API,
 * written for Unforget (synthetic, no third-party text) in the evaluation corpus's layout. Unit tests run on
 * it, so they need nothing outside the repository.
 */
export function sampleCorpus(): Corpus {
  // src/corpus.ts and dist/corpus.js both sit one folder below the package root; the files ship in src/.
  const dir = fileURLToPath(new URL("../src/sample-corpus", import.meta.url));
  return { dir, sessions: listCorpusSessions(dir) };
}

/**
 * The corpus folder: `$UNFORGET_CORPUS_DIR` when set, otherwise `../shared/corpus` next to the repository root
 * (the nearest folder above this package holding pnpm-workspace.yaml). Resolved from the repository, never
 * from a fixed absolute path, so a clone anywhere with `shared/` beside it works.
 */
export function corpusDir(): string {
  const fromEnvironment = process.env[CORPUS_DIR_ENV];
  if (fromEnvironment !== undefined && fromEnvironment.length > 0) return resolve(fromEnvironment);
  const start = dirname(fileURLToPath(import.meta.url));
  const root = findRepositoryRoot(start) ?? findRepositoryRoot(process.cwd());
  if (root === undefined) {
    throw new ConfigurationError(
      `No pnpm-workspace.yaml above ${start}: cannot locate the repository root. Set ${CORPUS_DIR_ENV} to the corpus folder.`,
      { setting: CORPUS_DIR_ENV },
    );
  }
  return resolve(root, "..", "shared", "corpus");
}

/** The nearest folder at or above `from` that holds pnpm-workspace.yaml, or undefined. */
export function findRepositoryRoot(from: string): string | undefined {
  let current = resolve(from);
  for (;;) {
    if (existsSync(join(current, "pnpm-workspace.yaml"))) return current;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Every session file in the corpus with its format, sorted by relative path. */
export function listCorpusSessions(directory: string = corpusDir()): CorpusSession[] {
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new ConfigurationError(
      `The corpus folder ${directory} does not exist. Put shared/corpus beside the repository or set ${CORPUS_DIR_ENV}.`,
      { setting: CORPUS_DIR_ENV },
    );
  }
  const sessions: CorpusSession[] = [];
  for (const path of walk(directory)) {
    const relativePath = relative(directory, path).split(sep).join("/");
    const format = classify(relativePath);
    if (format !== undefined) sessions.push({ path, relativePath, format });
  }
  return sessions.sort((a, b) =>
    a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0,
  );
}

function classify(relativePath: string): CorpusFormat | undefined {
  const [top] = relativePath.split("/");
  const name = relativePath.slice(relativePath.lastIndexOf("/") + 1);
  if (/^(LICENSE|README|MANIFEST)/i.test(name)) return undefined;
  switch (top) {
    case "claude-code":
      return name.endsWith(".jsonl") || name.endsWith(".json") ? "claude-code" : undefined;
    case "sweagent":
      return name.endsWith(".traj") ? "swe-agent" : undefined;
    case "mini-swe-agent":
      return name.endsWith(".json") ? "mini-swe-agent" : undefined;
    case "openhands":
      if (name.endsWith(".jsonl")) return "openhands-evaluation";
      return name.endsWith(".json") ? "openhands" : undefined;
    default:
      return undefined;
  }
}

function* walk(directory: string): Generator<string> {
  const entries = readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

/** Reads a corpus file as UTF-8 text; a relative path is taken relative to `directory` (the corpus folder by default). */
export function loadCorpusFile(path: string, directory: string = corpusDir()): string {
  return readFileSync(isAbsolute(path) ? path : join(directory, path), "utf8");
}
