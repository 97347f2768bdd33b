import { createRequire } from "node:module";
import { isRecord } from "./is-record.ts";
import { MemoryFrontmatterError } from "./memory-errors.ts";

/** What a memory is about: who the user is, a correction, project knowledge, or a pointer to a resource. */
export type MemoryType = "user" | "feedback" | "project" | "reference";

export const MEMORY_TYPES: readonly MemoryType[] = ["user", "feedback", "project", "reference"];

/** Where a memory came from, so a reader can go back to the conversation that produced it. */
export interface MemorySource {
  /** Session the memory was extracted from. */
  session?: string;
  /** First and last message ids of the exchange it came from. */
  messages?: [string, string] | string[];
  /** Anything else (a URL, a ticket, "user", "dream"). */
  note?: string;
}

/** The YAML frontmatter of a topic file. Unknown keys are kept when the store rewrites a file. */
export interface MemoryFrontmatter {
  name: string;
  description: string;
  type: MemoryType;
  /** `false` pins a stable fact: it never loses rank with age. */
  decay?: boolean;
  /** ISO-8601 date or time the memory was first written. */
  created?: string;
  /** ISO-8601 date or time of its last change. */
  updated?: string;
  /** Names of the memories this one replaces (they stay on disk, ranked below it and marked superseded). */
  supersedes?: string[];
  /** Relevance in [0, 1] kept by dream; 1 when absent. */
  relevance?: number;
  source?: MemorySource | string;
  [key: string]: unknown;
}

/** A topic file split into its frontmatter and its body. */
export interface ParsedMemoryFile {
  /** `undefined` when the file has no frontmatter block at all (a plain note). */
  frontmatter: MemoryFrontmatter | undefined;
  body: string;
}

let yamlModule: typeof import("yaml") | undefined;

/**
 * The YAML parser, loaded by the first frontmatter read or written rather than with the package: it is 250 kB of
 * code that a session whose memory folder is empty (every `unforget -p` in a new project) would compile at
 * start-up for nothing. Loaded synchronously (its CommonJS build), because parsing a file is synchronous.
 */
function yaml(): typeof import("yaml") {
  yamlModule ??= createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return yamlModule;
}

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/**
 * Splits and checks a topic file. A file without a `---` block is a plain note (`frontmatter` undefined); a
 * block that is not YAML, is not a mapping, or has a field of the wrong type throws `MemoryFrontmatterError`
 * with the line — the caller decides what to do, and nothing here ever touches the file.
 */
export function parseMemoryFile(content: string, memoryName: string): ParsedMemoryFile {
  const opening = OPENING.exec(content);
  if (!opening) return { frontmatter: undefined, body: content };
  const rest = content.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) {
    throw new MemoryFrontmatterError(
      `${memoryName}: the frontmatter opened with --- on line 1 is never closed; add a line with --- after it.`,
      { memoryName, line: 1 },
    );
  }
  const yamlText = rest.slice(0, closing.index);
  const afterClosing = rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, "");
  const document = yaml().parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  const problem = document.errors[0];
  if (problem) {
    const line = (problem.linePos?.[0]?.line ?? 0) + 1;
    throw new MemoryFrontmatterError(
      `${memoryName}: the frontmatter is not valid YAML near line ${line} (${problem.message.split("\n")[0]}); fix it by hand — the file was left as it is.`,
      { memoryName, line, cause: problem },
    );
  }
  const data: unknown = document.toJS();
  return { frontmatter: checkFrontmatter(data, memoryName), body: afterClosing };
}

function checkFrontmatter(data: unknown, memoryName: string): MemoryFrontmatter {
  const fail = (why: string): never => {
    throw new MemoryFrontmatterError(`${memoryName}: ${why}; the file was left as it is.`, { memoryName });
  };
  if (!isRecord(data)) fail("the frontmatter must be a YAML mapping (key: value lines)");
  const record = data as Record<string, unknown>;
  for (const key of ["name", "description", "type"] as const) {
    if (typeof record[key] !== "string" || (record[key] as string).trim() === "") {
      fail(`frontmatter field "${key}" is missing or not a string`);
    }
  }
  if (!MEMORY_TYPES.includes(record.type as MemoryType)) {
    fail(`frontmatter "type" is "${String(record.type)}"; use one of ${MEMORY_TYPES.join(", ")}`);
  }
  if (record.decay !== undefined && typeof record.decay !== "boolean") fail(`"decay" must be true or false`);
  for (const key of ["created", "updated"] as const) {
    const value = record[key];
    if (value instanceof Date) record[key] = value.toISOString();
    else if (value !== undefined && (typeof value !== "string" || Number.isNaN(Date.parse(value)))) {
      fail(`"${key}" must be an ISO-8601 date`);
    }
  }
  const supersedes = record.supersedes;
  if (typeof supersedes === "string") record.supersedes = [supersedes];
  else if (
    supersedes !== undefined &&
    !(Array.isArray(supersedes) && supersedes.every((s) => typeof s === "string"))
  ) {
    fail(`"supersedes" must be a memory name or a list of them`);
  }
  const relevance = record.relevance;
  if (relevance !== undefined && (typeof relevance !== "number" || !(relevance >= 0 && relevance <= 1))) {
    fail(`"relevance" must be a number between 0 and 1`);
  }
  const source = record.source;
  if (source !== undefined && typeof source !== "string" && !isRecord(source)) {
    fail(`"source" must be a string or a mapping`);
  }
  return record as MemoryFrontmatter;
}

/** Renders a topic file: the frontmatter as YAML between `---` lines, then the body. */
export function formatMemoryFile(frontmatter: MemoryFrontmatter, body: string): string {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(frontmatter)) if (value !== undefined) fields[key] = value;
  const text = yaml().stringify(fields, { lineWidth: 0 }).trimEnd();
  const trimmedBody = body.replace(/^\n+/, "");
  return `---\n${text}\n---\n${trimmedBody.endsWith("\n") || trimmedBody === "" ? trimmedBody : `${trimmedBody}\n`}`;
}
