import { ConfigurationError } from "@unforget/core";
import pg from "pg";
import type {
  ListenOptions,
  SqlClient,
  SqlPool,
  SqlQueryable,
  SqlResult,
  SqlSubscription,
  TransactionOptions,
} from "./sql-client.ts";
import { classifyFailure, failureError, withRetries } from "./sql-failure.ts";

/** Settings of a client on a PostgreSQL server. */
export interface ServerClientOptions {
  /** `postgres://user:password@host:port/database`; without it, node-postgres reads PGHOST, PGPORT, PGUSER, … */
  url?: string;
  /** A `pg` Pool the caller owns (it is never ended by `close`). */
  pool?: SqlPool;
  /** Connections in the shared pool. Default 5 (one pool per URL per process, shared by every client). */
  poolSize?: number;
  /** Give up connecting after this long. Default 5,000 ms. */
  connectTimeoutMs?: number;
  /** A statement (server side) and the wait for its reply (client side) end after this long. Default 15,000 ms. */
  statementTimeoutMs?: number;
  /** Retryable failures (restart, lost connection, serialization) are retried for this long. Default 20,000 ms. */
  retryDeadlineMs?: number;
  /** False behind a pooler that breaks LISTEN (PgBouncer transaction pooling): listeners then poll. Default true. */
  notifications?: boolean;
}

const DEFAULT_POOL_SIZE = 5;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
const DEFAULT_RETRY_DEADLINE_MS = 20_000;
/** A session left idle inside a transaction (a client that died mid-work) is ended by the server after this. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

interface SharedPool {
  pool: pg.Pool;
  clients: number;
}

// One pool per URL and size per process, shared by every client (memory, tasks): connections are few.
const sharedPools = new Map<string, SharedPool>();

/** `host:port/database` for messages, never the password. */
export function serverLocation(
  url: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string {
  if (url !== undefined) {
    try {
      const parsed = new URL(url);
      return `${parsed.hostname || "localhost"}:${parsed.port || "5432"}${parsed.pathname || ""}`;
    } catch {
      return "(an unparsable URL)";
    }
  }
  return `${env.PGHOST ?? "localhost"}:${env.PGPORT ?? "5432"}/${env.PGDATABASE ?? env.PGUSER ?? ""}`;
}

function connectionConfig(options: ServerClientOptions): pg.PoolConfig {
  const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  return {
    ...(options.url === undefined ? {} : { connectionString: options.url }),
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // Both ends bound a statement: the server stops it, and the client stops waiting on a half-open socket.
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 1_000,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    application_name: "unforget",
  };
}

function acquirePool(options: ServerClientOptions): { pool: SqlPool; release: () => Promise<void> } {
  if (options.pool) return { pool: options.pool, release: async () => undefined };
  const size = options.poolSize ?? DEFAULT_POOL_SIZE;
  const key = JSON.stringify([
    options.url ?? null,
    size,
    options.connectTimeoutMs,
    options.statementTimeoutMs,
  ]);
  let shared = sharedPools.get(key);
  if (!shared) {
    const pool = new pg.Pool({ ...connectionConfig(options), max: size, idleTimeoutMillis: 10_000 });
    // An idle connection that the server dropped (a restart) is reported here; the next checkout reconnects.
    pool.on("error", () => undefined);
    shared = { pool, clients: 0 };
    sharedPools.set(key, shared);
  }
  shared.clients++;
  const owned = shared;
  let released = false;
  return {
    pool: owned.pool as unknown as SqlPool,
    release: async () => {
      if (released) return;
      released = true;
      owned.clients--;
      if (owned.clients === 0) {
        sharedPools.delete(key);
        await owned.pool.end();
      }
    },
  };
}

type PgResult = { rows: unknown[]; rowCount: number | null };

/** A text of several statements (a migration) answers with one result each: the last one is the answer. */
function toResult<Row>(result: PgResult | PgResult[]): SqlResult<Row> {
  const last = Array.isArray(result) ? result.at(-1) : result;
  return { rows: (last?.rows ?? []) as Row[], rowCount: last?.rowCount ?? 0 };
}

type Connection = Awaited<ReturnType<SqlPool["connect"]>>;

/**
 * A text of several statements can begin a transaction and not end it (a BEGIN, then a failure before its
 * COMMIT): the connection must not go back to the pool inside it, or the next user's statements would run in
 * it (or be refused: "current transaction is aborted"). Rolled back; destroyed when that fails. After a
 * failed text the status is not known yet (node-postgres reports the error before the server says whether a
 * transaction is open), so it is rolled back anyway: outside a transaction that is only a warning.
 */
async function leaveTransaction(connection: Connection, failedText: boolean): Promise<Error | undefined> {
  const status = connection.getTransactionStatus?.();
  if (!failedText && status !== "T" && status !== "E") return undefined;
  try {
    await connection.query("ROLLBACK");
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** BEGIN, with the transaction's own timeouts in the same round trip (several statements, no parameters). */
function beginStatement(options: TransactionOptions | undefined): string {
  const timeoutMs = options?.timeoutMs;
  if (timeoutMs === undefined) return "BEGIN";
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigurationError(`timeoutMs must be a positive number of milliseconds (got ${timeoutMs}).`, {
      setting: "timeoutMs",
    });
  }
  const ms = Math.ceil(timeoutMs);
  return `BEGIN; SET LOCAL statement_timeout = ${ms}; SET LOCAL idle_in_transaction_session_timeout = ${ms}`;
}

const ignoreError = () => undefined;
const guarded = new WeakSet<object>();

/**
 * A connection from the pool, with an error listener for its whole life: a connection that dies between two
 * statements, or just after it went back to the pool, reports it as an event, which must not crash the
 * process; the next statement on it fails and is retried on another.
 */
async function checkout(pool: SqlPool): Promise<{ connection: Connection; release(destroy?: Error): void }> {
  const connection = await pool.connect();
  if (!guarded.has(connection)) {
    guarded.add(connection);
    connection.on?.("error", ignoreError);
  }
  return { connection, release: (destroy) => connection.release(destroy) };
}

/** A client on a server: the shared pool, retries within the deadline, one LISTEN connection when asked. */
export function createServerClient(options: ServerClientOptions): SqlClient {
  const location = serverLocation(options.url);
  const deadlineMs = options.retryDeadlineMs ?? DEFAULT_RETRY_DEADLINE_MS;
  const { pool, release } = acquirePool(options);
  const listener = createListener(options, location);
  let closed = false;

  const checkOpen = () => {
    if (closed) throw failureError(new Error("the client was closed"), location, "fatal", deadlineMs);
  };

  // Inside a transaction: a failure worth retrying goes up as it is (the whole transaction runs again); any
  // other becomes its typed error.
  const inTransaction = (connection: Connection): SqlQueryable => ({
    async query<Row>(text: string, values?: readonly unknown[]) {
      try {
        return toResult<Row>(await connection.query(text, values as unknown[] | undefined));
      } catch (error) {
        const kind = classifyFailure(error);
        throw kind === "retry" ? error : failureError(error, location, kind, deadlineMs);
      }
    },
  });

  return {
    kind: "server",
    location,
    async query<Row>(text: string, values?: readonly unknown[]) {
      checkOpen();
      return withRetries(
        async () => {
          const { connection, release } = await checkout(pool);
          try {
            const result = toResult<Row>(await connection.query(text, values as unknown[] | undefined));
            release(await leaveTransaction(connection, false));
            return result;
          } catch (error) {
            release(
              classifyFailure(error) === "retry"
                ? (error as Error)
                : await leaveTransaction(connection, values === undefined || values.length === 0),
            );
            throw error;
          }
        },
        { location, deadlineMs },
      );
    },
    async transaction(work, transactionOptions) {
      checkOpen();
      const begin = beginStatement(transactionOptions);
      return withRetries(
        async () => {
          const { connection, release } = await checkout(pool);
          let destroy: Error | undefined;
          try {
            await connection.query(begin);
            const result = await work(inTransaction(connection));
            await connection.query("COMMIT");
            return result;
          } catch (error) {
            if (classifyFailure(error) === "retry") destroy = error as Error;
            else {
              await connection.query("ROLLBACK").catch((rollbackError: unknown) => {
                destroy = rollbackError as Error;
              });
            }
            throw error;
          } finally {
            release(destroy);
          }
        },
        { location, deadlineMs },
      );
    },
    listen(channel, onNotice, listenOptions) {
      checkOpen();
      return listener.add(channel, onNotice, listenOptions);
    },
    async close() {
      if (closed) return;
      closed = true;
      await listener.closeAll();
      await release();
    },
  };
}

interface Listening {
  channel: string;
  onNotice: (payload: string) => void;
  onReconnect: (() => void) | undefined;
}

/** What the client's one LISTEN connection holds: the subscriptions, the connection and its retry state. */
interface ListenerState {
  readonly options: ServerClientOptions;
  readonly location: string;
  readonly listening: Set<Listening>;
  connection: pg.Client | undefined;
  connecting: Promise<void> | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  failures: number;
  stopped: boolean;
}

/** The client's one LISTEN connection (outside the pool), set up again after it is lost. */
function createListener(options: ServerClientOptions, location: string) {
  const state: ListenerState = {
    options,
    location,
    listening: new Set(),
    connection: undefined,
    connecting: undefined,
    retryTimer: undefined,
    failures: 0,
    stopped: false,
  };
  return {
    add: (channel: string, onNotice: (payload: string) => void, listenOptions?: ListenOptions) =>
      addListening(state, channel, onNotice, listenOptions),
    closeAll: async () => {
      state.stopped = true;
      state.listening.clear();
      await closeConnection(state);
    },
  };
}

function quoteChannel(channel: string): string {
  return `"${channel.replace(/"/g, '""')}"`;
}

/** Opens the LISTEN connection and listens on every channel wanted; after a loss, tells each subscription. */
async function connectListener(state: ListenerState, afterLoss: boolean): Promise<void> {
  const config = state.options.pool?.options ?? connectionConfig(state.options);
  const client = new pg.Client({ ...(config as pg.ClientConfig), query_timeout: undefined });
  client.on("notification", (message) => {
    for (const entry of state.listening) {
      if (entry.channel === message.channel) entry.onNotice(message.payload ?? "");
    }
  });
  client.on("error", () => listenerLost(state, client));
  client.on("end", () => listenerLost(state, client));
  await client.connect();
  for (const channel of new Set([...state.listening].map((entry) => entry.channel))) {
    await client.query(`LISTEN ${quoteChannel(channel)}`);
  }
  state.connection = client;
  state.failures = 0;
  if (afterLoss) for (const entry of state.listening) entry.onReconnect?.();
}

function listenerLost(state: ListenerState, client: pg.Client): void {
  if (state.connection !== client) return;
  state.connection = undefined;
  client.removeAllListeners("end");
  client.end().catch(() => undefined);
  scheduleReconnect(state);
}

/** Tries the connection again after a delay that doubles with each failure, up to five seconds. */
function scheduleReconnect(state: ListenerState): void {
  if (state.stopped || state.retryTimer || state.listening.size === 0) return;
  const delay = Math.min(5_000, 100 * 2 ** state.failures);
  state.retryTimer = setTimeout(() => {
    state.retryTimer = undefined;
    state.connecting = connectListener(state, true).catch(() => {
      state.failures++;
      scheduleReconnect(state);
    });
  }, delay);
  state.retryTimer.unref();
}

async function addListening(
  state: ListenerState,
  channel: string,
  onNotice: (payload: string) => void,
  listenOptions?: ListenOptions,
): Promise<SqlSubscription> {
  const { options, listening } = state;
  const entry: Listening = { channel, onNotice, onReconnect: listenOptions?.onReconnect };
  if (options.notifications === false) {
    return { live: false, close: async () => undefined };
  }
  listening.add(entry);
  await state.connecting?.catch(() => undefined);
  if (state.connection) await state.connection.query(`LISTEN ${quoteChannel(channel)}`);
  else if (state.retryTimer) {
    // The connection was lost and is being set up again: it will LISTEN on every channel, this one too.
  } else {
    state.connecting = connectListener(state, false);
    try {
      await state.connecting;
    } catch (error) {
      listening.delete(entry);
      throw failureError(
        error,
        state.location,
        classifyFailure(error),
        options.retryDeadlineMs ?? DEFAULT_RETRY_DEADLINE_MS,
      );
    }
  }
  return {
    live: true,
    close: async () => {
      listening.delete(entry);
      const stillWanted = [...listening].some((other) => other.channel === channel);
      if (!stillWanted)
        await state.connection?.query(`UNLISTEN ${quoteChannel(channel)}`).catch(() => undefined);
      if (listening.size === 0) await closeConnection(state);
    },
  };
}

async function closeConnection(state: ListenerState): Promise<void> {
  if (state.retryTimer) clearTimeout(state.retryTimer);
  state.retryTimer = undefined;
  const client = state.connection;
  state.connection = undefined;
  if (client) {
    client.removeAllListeners("end");
    await client.end().catch(() => undefined);
  }
}
