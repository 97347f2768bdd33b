import type { SecretScanner } from "../team/secret-scan.ts";
import { hashContent } from "./content-hash.ts";
import {
  MemoryArgumentError,
  MemoryConflictError,
  MemoryLimitError,
  MemoryPathError,
  MemorySecretError,
} from "./memory-errors.ts";
import { parseMemoryFile } from "./memory-frontmatter.ts";
import { MEMORY_INDEX_NAME } from "./memory-index.ts";
import { normalizeMemoryName } from "./memory-name.ts";
import type { MemoryStore, MemoryWriteOptions } from "./memory-store.ts";
import type { MemoryVersion, RedactOptions } from "./memory-versions.ts";

/**
 * The rules every `MemoryStore` applies, whatever holds the memories. A backend calls the checks before any
 * I/O and `checkExpectedHash` inside its atomic section (under its lock, or in its transaction), so that a
 * folder and a database server refuse the same inputs with the same typed errors.
 */

/** A content hash as `read` returns it: SHA-256, lower-case hex. */
export const MEMORY_HASH_PATTERN = /^[0-9a-f]{64}$/;
/** Longest `writeId` accepted, in characters. */
const MAX_WRITE_ID_LENGTH = 200;

/** What a backend knows about a memory's current state when it checks a compare-and-swap. */
export interface MemoryHead {
  /** SHA-256 of the current content. */
  hash: string;
  /** The memory's version number, when the store numbers versions. */
  version?: number;
  /** Who wrote the current content, when the store knows. */
  author?: string;
}

/** A lone surrogate: in a `u` regex a well-formed pair is one code point, so only an unpaired half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** `String.prototype.isWellFormed`: no lone surrogate (what UTF-8, and so every store, cannot hold). */
function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Checks `expectedHash` and `writeId` by their shape alone; throws `MemoryArgumentError` naming the bad one. */
export function checkWriteOptions(options: MemoryWriteOptions | undefined): void {
  if (options === undefined) return;
  const { expectedHash, writeId } = options;
  if (expectedHash !== undefined && expectedHash !== null) {
    if (typeof expectedHash !== "string" || !MEMORY_HASH_PATTERN.test(expectedHash)) {
      throw new MemoryArgumentError(
        `expectedHash ${JSON.stringify(String(expectedHash).slice(0, 80))} is not a content hash: pass the \`hash\` that read() returned (64 lower-case hex characters), or null for "must not exist yet".`,
        { argument: "expectedHash" },
      );
    }
  }
  if (writeId !== undefined) {
    if (
      typeof writeId !== "string" ||
      writeId.length === 0 ||
      writeId.length > MAX_WRITE_ID_LENGTH ||
      !isWellFormed(writeId) ||
      writeId.includes("\u0000")
    ) {
      throw new MemoryArgumentError(
        `writeId must be a non-empty string of at most ${MAX_WRITE_ID_LENGTH} characters without NUL (a UUID per logical change is a good choice).`,
        { argument: "writeId" },
      );
    }
  }
}

/**
 * Everything a write's content is checked for before any I/O: a string of well-formed UTF-16 without NUL (a
 * database stores neither a lone surrogate nor NUL faithfully, so the hash would not match), the size cap, a
 * readable frontmatter, and (with a scanner) no secret. Throws the typed error; nothing has been written.
 * Resolves to what the write must report (a secret scan that ran only in part), empty when there is nothing.
 */
export async function checkMemoryContent(
  name: string,
  content: string,
  limits: { maxFileBytes: number; secretScanner: SecretScanner | undefined },
): Promise<string[]> {
  if (typeof content !== "string") {
    throw new MemoryArgumentError(`The content of ${name} must be a string.`, { argument: "content" });
  }
  if (content.includes("\u0000")) {
    throw new MemoryArgumentError(
      `The content of ${name} contains a NUL character (U+0000), which memories cannot hold; remove it (binary data belongs in a file the memory points to).`,
      { argument: "content" },
    );
  }
  if (!isWellFormed(content)) {
    throw new MemoryArgumentError(
      `The content of ${name} contains a lone surrogate (half of a UTF-16 pair), which is not valid text; fix the encoding of what produced it.`,
      { argument: "content" },
    );
  }
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > limits.maxFileBytes) {
    throw new MemoryLimitError(
      `${name} would be ${bytes} bytes; the limit is ${limits.maxFileBytes}. Split it into several topic files or shorten it.`,
      { limit: "file-bytes", actual: bytes, maximum: limits.maxFileBytes },
    );
  }
  if (name !== MEMORY_INDEX_NAME) parseMemoryFile(content, name);
  const incomplete = limits.secretScanner
    ? await checkNoSecrets(name, content, limits.secretScanner)
    : undefined;
  return incomplete === undefined ? [] : [incomplete];
}

/**
 * Throws `MemorySecretError` naming the rules when the scanner finds what looks like a secret in `content`.
 * Resolves to a note for the write's result when the scan ran only in part (`incomplete`), else to undefined.
 */
export async function checkNoSecrets(
  name: string,
  content: string,
  scanner: SecretScanner,
): Promise<string | undefined> {
  const findings = await scanner.scan(content);
  if (findings.length === 0)
    return findings.incomplete === undefined ? undefined : `${name}: ${findings.incomplete}`;
  const rules = [...new Set(findings.map((finding) => finding.rule))];
  const where = findings.map((finding) => `line ${finding.line}: ${finding.message}`).join("; ");
  throw new MemorySecretError(
    `${name} was not written: it contains what looks like a secret (${where}; rules ${rules.join(", ")}). Remove the secret (store a reference to where it lives instead) and write again.`,
    { memoryName: name, rules },
  );
}

/**
 * The compare-and-swap rule: with an `expectedHash`, the memory's current hash must be exactly that (`null`:
 * the memory must not exist). A stale hash is a conflict even when the new content equals the current one —
 * the caller computed its change from a state that is gone. Throws `MemoryConflictError` with the current
 * hash, version and author.
 */
export function checkExpectedHash(
  name: string,
  expected: string | null | undefined,
  current: MemoryHead | undefined,
): void {
  if (expected === undefined) return;
  const actual = current === undefined ? null : current.hash;
  if (actual === expected) return;
  const what =
    expected === null
      ? "it was expected not to exist, but it does"
      : actual === null
        ? "it was expected to exist, but it does not"
        : `its hash is ${actual.slice(0, 12)}…, not the expected ${expected.slice(0, 12)}…`;
  const by =
    current?.author === undefined
      ? ""
      : ` (now ${current.version === undefined ? "" : `version ${current.version}, `}written by ${current.author})`;
  throw new MemoryConflictError(
    `${name} changed since it was read (${what})${by}; someone else wrote first. Read it again, merge your change and write with the new hash.`,
    {
      memoryName: name,
      expectedHash: expected,
      actualHash: actual,
      ...(current?.version === undefined ? {} : { actualVersion: current.version }),
      ...(current?.author === undefined ? {} : { actualAuthor: current.author }),
    },
  );
}

/** The head of a memory whose content is known (for stores that keep no separate hash). */
export function headOf(content: string | undefined): MemoryHead | undefined {
  return content === undefined ? undefined : { hash: hashContent(content) };
}

/** One call as a retry is compared with the call that first used its `writeId`. */
export interface WriteAttempt {
  name: string;
  /** `write`, `delete`, `rename-to` (keyed by the new name) or `restore`. */
  operation: string;
  /** The hash the call resolves to (`null` for a delete; left out when not known before the call runs). */
  hash?: string | null;
}

/**
 * A retry of a call whose `writeId` the store has seen resolves to what the first call resolved to, without
 * checking `expectedHash` again (the first call passed it; the retry may come after an ambiguous commit).
 * A `writeId` reused for a different change is refused with `MemoryArgumentError`.
 */
export function replayWrite(
  writeId: string,
  first: WriteAttempt,
  retry: WriteAttempt,
): { hash: string | null } {
  const sameHash = retry.hash === undefined || first.hash === retry.hash;
  if (first.name !== retry.name || first.operation !== retry.operation || !sameHash) {
    throw new MemoryArgumentError(
      `writeId ${JSON.stringify(writeId)} was already used for another change (${first.operation} of ${first.name}); use a new writeId for each logical change and the same one only to retry it.`,
      { argument: "writeId" },
    );
  }
  return { hash: first.hash ?? null };
}

/** The content a restore writes back; a redacted version has none. */
function restorableContent(version: MemoryVersion): string {
  if (version.redactedAt !== undefined) {
    throw new MemoryArgumentError(
      `Version ${version.id} of ${version.name} was redacted at ${version.redactedAt} and has no content to restore; pick another version.`,
      { argument: "versionId" },
    );
  }
  return version.content;
}

/** A redaction never blanks what the memory holds now: that would leave a head with no version behind it. */
export function refuseHeadRedaction(version: MemoryVersion, headHash: string | null): void {
  if (version.hash !== null && version.hash === headHash) {
    throw new MemoryArgumentError(
      `Version ${version.id} holds the current content of ${version.name}; overwrite or delete the memory first, then redact the version.`,
      { argument: "versionId" },
    );
  }
}

/** `keep` for `pruneVersions`: a whole number of at least 1. */
export function checkKeep(keep: unknown): number {
  if (typeof keep !== "number" || !Number.isInteger(keep) || keep < 1) {
    throw new MemoryArgumentError(
      `pruneVersions needs \`keep\` (a whole number of at least 1), got ${JSON.stringify(keep)}.`,
      { argument: "keep" },
    );
  }
  return keep;
}

/** MEMORY.md is generated from the memories: it cannot be deleted, renamed, or overwritten by a rename. */
export function refuseIndexName(name: string, what: string): void {
  if (name === MEMORY_INDEX_NAME) {
    throw new MemoryPathError(
      `${MEMORY_INDEX_NAME} is the index of the memory store and cannot be ${what}.`,
      {
        name,
        rule: "reserved",
      },
    );
  }
}

/** `restore` for any store: the version's content written back as a new version (CAS like `write`). */
export async function restoreVersion(
  store: MemoryStore,
  name: string,
  versionId: string,
  writeOptions: MemoryWriteOptions = {},
): Promise<{ hash: string }> {
  const checked = normalizeMemoryName(name);
  const version = await store.readVersion(checked, versionId);
  return store.write(checked, restorableContent(version), {
    ...writeOptions,
    reason: writeOptions.reason ?? `restore version ${versionId}`,
  });
}

/** What a redacted version says in place of its reason: who redacted it, and why. */
export function redactionReason(options: RedactOptions, defaultAuthor: string): string {
  return `redacted by ${options.author ?? defaultAuthor}${options.reason === undefined ? "" : `: ${options.reason}`}`;
}
