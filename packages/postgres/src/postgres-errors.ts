import { UnforgetError } from "@unforget/core";

/**
 * The database cannot be reached or refuses us: the server is down or unreachable past the retry deadline,
 * the credentials are wrong, or the database does not exist. The message names host:port and the fix.
 */
export class StoreUnavailableError extends UnforgetError {
  /** `host:port` (or the PGlite data dir) that was tried. */
  readonly location: string;
  /** Why, in a word: `unreachable`, `authentication`, `no-database`, `timeout`, `data-dir` (PGlite's folder). */
  readonly reason: string;

  constructor(message: string, details: { location: string; reason: string; cause?: unknown }) {
    super("store_unavailable", message, { cause: details.cause });
    this.location = details.location;
    this.reason = details.reason;
  }
}

/**
 * Another live process has this PGlite data dir open. PGlite takes no lock of its own, and two processes on
 * one data dir lose writes, so the second is refused and never takes over from a live holder.
 */
export class StoreLockedError extends UnforgetError {
  /** The data dir. */
  readonly dataDir: string;
  /** Who holds it. */
  readonly holder: { pid: number; host: string; startedAt: string };

  constructor(
    message: string,
    details: { dataDir: string; holder: { pid: number; host: string; startedAt: string } },
  ) {
    super("store_locked", message);
    this.dataDir = details.dataDir;
    this.holder = details.holder;
  }
}

/** The database's schema was migrated by a newer version of this code: upgrade before using it. */
export class SchemaTooNewError extends UnforgetError {
  readonly component: string;
  /** The newest migration this code knows. */
  readonly knownVersion: number;
  /** The newest migration the database has. */
  readonly databaseVersion: number;

  constructor(
    message: string,
    details: { component: string; knownVersion: number; databaseVersion: number },
  ) {
    super("schema_too_new", message);
    this.component = details.component;
    this.knownVersion = details.knownVersion;
    this.databaseVersion = details.databaseVersion;
  }
}

/**
 * The database's schema does not match this code's migrations: an applied migration's checksum differs (it
 * was edited after it ran), or migrations are missing where `migrate: false` forbids running them.
 */
export class SchemaMismatchError extends UnforgetError {
  readonly component: string;
  /** The migration in question. */
  readonly version: number;

  constructor(message: string, details: { component: string; version: number }) {
    super("schema_mismatch", message);
    this.component = details.component;
    this.version = details.version;
  }
}

/** A statement failed for a reason of its own (a constraint, a type, a syntax error): `sqlState` says which. */
export class SqlError extends UnforgetError {
  /** The SQLSTATE code (`23505` unique violation, `22021` bad encoding, …), when the database gave one. */
  readonly sqlState: string | undefined;
  /** The constraint involved, when the database named one. */
  readonly constraint: string | undefined;

  constructor(message: string, details: { sqlState?: string; constraint?: string; cause?: unknown }) {
    super("sql_error", message, { cause: details.cause });
    this.sqlState = details.sqlState;
    this.constraint = details.constraint;
  }
}
