/** What a statement returns. */
export interface SqlResult<Row> {
  rows: Row[];
  /** Rows inserted, updated or deleted (0 for a SELECT on PGlite). */
  rowCount: number;
}

/** Something that runs statements: the client itself, or one transaction. */
export interface SqlQueryable {
  /**
   * Runs one statement with `$1`, `$2`, … parameters. Rejects with `SqlError` (its `sqlState` says why), or
   * `StoreUnavailableError` when the database cannot be reached within the retry deadline.
   */
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<SqlResult<Row>>;
}

/** A LISTEN that `listen` set up. */
export interface SqlSubscription {
  /** False when notices cannot arrive (PgBouncer transaction pooling, `notifications: false`): poll instead. */
  readonly live: boolean;
  /** Stops listening; the connection is closed when no channel is left. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /**
   * Called after the listening connection was lost and set up again: notices sent meanwhile are gone, so
   * the listener reads what it missed. Never called for PGlite (in the process, nothing is lost).
   */
  onReconnect?: () => void;
}

/** How one transaction runs. */
export interface TransactionOptions {
  /**
   * On a server, the longest any statement of the transaction, and any pause between its statements, may
   * last (`SET LOCAL statement_timeout` and `idle_in_transaction_session_timeout`): a client paused or cut
   * off inside the transaction has it, and its locks, ended by the server after this long. Ignored by PGlite,
   * which runs in the caller's process (whatever pauses the caller pauses the database).
   */
  timeoutMs?: number;
}

/**
 * One database, on a server (a `pg` pool shared by every client of the process) or embedded (PGlite in
 * this process, one process per data dir). Every store and backend of Unforget takes one; they share its
 * pool, its retries and its timeouts.
 */
export interface SqlClient extends SqlQueryable {
  /** `server` or `pglite`: PGlite is one connection, so work that needs several (a second LISTEN) differs. */
  readonly kind: "server" | "pglite";
  /** `host:port/database` (never the password) or the PGlite data dir, for messages. */
  readonly location: string;
  /**
   * Runs `work` in one transaction (BEGIN … COMMIT; ROLLBACK when it throws). On a server, a transaction
   * that failed for a retryable reason (a restart, a lost connection, a serialization failure) is run again
   * from the start within the retry deadline — also when the connection was lost after COMMIT was sent, so
   * the work must be idempotent (carry its own id, as memory writes do).
   */
  transaction<T>(work: (transaction: SqlQueryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Calls `onNotice` with each NOTIFY payload on `channel` (a hint only: notices are lost on reconnect). */
  listen(
    channel: string,
    onNotice: (payload: string) => void,
    options?: ListenOptions,
  ): Promise<SqlSubscription>;
  /** Releases this client: the pool ends when its last client closes; PGlite closes and drops its lock. */
  close(): Promise<void>;
}

/** The part of a `pg` `Pool` a client uses, when the caller brings its own. */
export interface SqlPool {
  connect(): Promise<{
    query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
    release(destroy?: boolean | Error): void;
    /** `I` idle, `T` in a transaction, `E` in a failed one (node-postgres 8.12 and later). */
    getTransactionStatus?(): string | null;
    on?(event: "error", listener: (error: Error) => void): unknown;
  }>;
  on(event: "error", listener: (error: Error) => void): unknown;
  end(): Promise<void>;
  /** The connection settings, when it is a `pg` Pool (used to open the LISTEN connection). */
  readonly options?: Record<string, unknown>;
}
