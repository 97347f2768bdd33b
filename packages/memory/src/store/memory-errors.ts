import { UnforgetError } from "@unforget/core";

/** A memory name or tool path that would leave the memory root, or is not a valid memory name. */
export class MemoryPathError extends UnforgetError {
  /** The name or path as it was given. */
  readonly path: string;
  /** Which rule refused it (`traversal`, `encoded`, `absolute`, `symlink`, `nul`, `too-long`, …). */
  readonly rule: string;
  /** Why the rule refused it, in a few words ("it has a . or .. segment"). */
  readonly reason: string;

  constructor(message: string, details: { name: string; rule: string; reason?: string; cause?: unknown }) {
    super("memory_path", message, { cause: details.cause });
    this.path = details.name;
    this.rule = details.rule;
    this.reason = details.reason ?? message;
  }
}

/** `read`, `delete` or `rename` of a memory that does not exist. */
export class MemoryNotFoundError extends UnforgetError {
  readonly memoryName: string;

  constructor(message: string, details: { memoryName: string; cause?: unknown }) {
    super("memory_not_found", message, { cause: details.cause });
    this.memoryName = details.memoryName;
  }
}

/**
 * A compare-and-swap write found another content than the one it expected: someone else wrote first.
 * Nothing was written; re-read, merge and write again with the new hash.
 */
export class MemoryConflictError extends UnforgetError {
  readonly memoryName: string;
  /** The hash the caller expected (`null`: the caller expected the memory not to exist). */
  readonly expectedHash: string | null;
  /** The hash on disk now (`null`: the memory does not exist). */
  readonly actualHash: string | null;
  /** The memory's current version number, when the store numbers versions and the memory exists. */
  readonly actualVersion: number | undefined;
  /** Who wrote the current content, when the store knows. */
  readonly actualAuthor: string | undefined;

  constructor(
    message: string,
    details: {
      memoryName: string;
      expectedHash: string | null;
      actualHash: string | null;
      actualVersion?: number;
      actualAuthor?: string;
    },
  ) {
    super("memory_conflict", message);
    this.memoryName = details.memoryName;
    this.expectedHash = details.expectedHash;
    this.actualHash = details.actualHash;
    this.actualVersion = details.actualVersion;
    this.actualAuthor = details.actualAuthor;
  }
}

/**
 * An argument of a memory call is malformed by its shape alone (an `expectedHash` that is not a hash, an
 * empty `writeId`, content with NUL or a lone surrogate). Refused before any I/O; nothing was written.
 */
export class MemoryArgumentError extends UnforgetError {
  /** Which argument (`expectedHash`, `writeId`, `content`, `versionId`, `namespace`, …). */
  readonly argument: string;

  constructor(message: string, details: { argument: string }) {
    super("memory_argument", message);
    this.argument = details.argument;
  }
}

/** A memory's YAML frontmatter does not parse or has a field of the wrong shape. The file is left as it is. */
export class MemoryFrontmatterError extends UnforgetError {
  readonly memoryName: string;
  /** 1-based line in the file where the problem is, when known. */
  readonly line: number | undefined;

  constructor(message: string, details: { memoryName: string; line?: number; cause?: unknown }) {
    super("memory_frontmatter", message, { cause: details.cause });
    this.memoryName = details.memoryName;
    this.line = details.line;
  }
}

/** A write over a size cap (file bytes, name bytes, memories per extraction). Nothing was written. */
export class MemoryLimitError extends UnforgetError {
  readonly limit: string;
  readonly actual: number;
  readonly maximum: number;

  constructor(message: string, details: { limit: string; actual: number; maximum: number }) {
    super("memory_limit", message);
    this.limit = details.limit;
    this.actual = details.actual;
    this.maximum = details.maximum;
  }
}

/** A team-memory write that contains what looks like a secret. Nothing was written. */
export class MemorySecretError extends UnforgetError {
  readonly memoryName: string;
  /** The rules that matched (e.g. `aws-access-key-id`, `@secretlint/secretlint-rule-slack`). */
  readonly rules: string[];

  constructor(message: string, details: { memoryName: string; rules: string[] }) {
    super("memory_secret", message);
    this.memoryName = details.memoryName;
    this.rules = details.rules;
  }
}

/** The store's lock could not be taken in time (another writer holds it), or a dream is already running. */
export class MemoryLockError extends UnforgetError {
  readonly lockPath: string;

  constructor(message: string, details: { lockPath: string; cause?: unknown }) {
    super("memory_lock", message, { cause: details.cause });
    this.lockPath = details.lockPath;
  }
}

/**
 * A file or folder of the store is not what it must be: a folder where a memory or a record belongs, a file
 * where a folder belongs, a symlink loop, a record that does not parse, a file that cannot be read. Only a
 * missing file means "absent"; anything else is this error, and nothing was changed.
 */
export class MemoryStoreError extends UnforgetError {
  /** The path that could not be used. */
  readonly storePath: string;

  constructor(message: string, details: { storePath: string; cause?: unknown }) {
    super("memory_store", message, { cause: details.cause });
    this.storePath = details.storePath;
  }
}
