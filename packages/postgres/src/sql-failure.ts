import { isUnforgetError } from "@unforget/core";
import { SqlError, StoreUnavailableError } from "./postgres-errors.ts";

/**
 * SQLSTATEs worth running again: the server is shutting down or starting (57P01, 57P02, 57P03), the
 * connection failed (class 08), or the transaction lost a race (40001 serialization, 40P01 deadlock).
 */
const RETRYABLE_STATES = new Set(["57P01", "57P02", "57P03", "40001", "40P01"]);
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ENOTFOUND",
]);
// node-postgres reports a lost or timed-out connection with these messages and no code.
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed|terminating connection/i;

/** What to do about a failure. */
export type FailureKind = "retry" | "authentication" | "no-database" | "fatal";

interface DatabaseErrorLike {
  code?: unknown;
  message?: unknown;
  constraint?: unknown;
}

export function classifyFailure(error: unknown): FailureKind {
  const { code, message } = (error ?? {}) as DatabaseErrorLike;
  if (typeof code === "string") {
    if (RETRYABLE_STATES.has(code) || code.startsWith("08") || NETWORK_CODES.has(code)) return "retry";
    if (code === "28P01" || code === "28000") return "authentication";
    if (code === "3D000") return "no-database";
  }
  if (typeof message === "string" && CONNECTION_MESSAGES.test(message)) return "retry";
  return "fatal";
}

/** The typed error for a failure that is not retried (any more). */
export function failureError(error: unknown, location: string, kind: FailureKind, deadlineMs: number): Error {
  if (isUnforgetError(error)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  if (kind === "authentication") {
    return new StoreUnavailableError(
      `PostgreSQL at ${location} refused the credentials (${detail}). Check the user and password in the URL, or PGUSER / PGPASSWORD, and the server's pg_hba.conf.`,
      { location, reason: "authentication", cause: error },
    );
  }
  if (kind === "no-database") {
    return new StoreUnavailableError(
      `PostgreSQL at ${location} has no such database (${detail}). Create it (createdb, or CREATE DATABASE) or fix the database name in the URL / PGDATABASE.`,
      { location, reason: "no-database", cause: error },
    );
  }
  if (kind === "retry") {
    return new StoreUnavailableError(
      `PostgreSQL at ${location} could not be reached for ${Math.round(deadlineMs / 1000)} s (${detail}). Check that the server runs and the host and port are right (the URL, or PGHOST / PGPORT); for one machine, an embedded PGlite data dir or the directory store needs no server.`,
      { location, reason: "unreachable", cause: error },
    );
  }
  const { code, constraint } = (error ?? {}) as DatabaseErrorLike;
  // Not the database's error (a bug in the caller's work): pass it on as it is.
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code))
    return error instanceof Error ? error : new SqlError(detail, { cause: error });
  return new SqlError(`PostgreSQL at ${location}: ${detail}`, {
    sqlState: code,
    ...(typeof constraint === "string" ? { constraint } : {}),
    cause: error,
  });
}

/** How long to wait before attempt `attempt` (1-based): 50 ms doubling to 1 s, with jitter. */
function backoff(attempt: number): number {
  const base = Math.min(1_000, 50 * 2 ** (attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or `deadlineMs` has passed since the first
 * try; the last failure becomes a typed error.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  options: { location: string; deadlineMs: number },
): Promise<T> {
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const kind = classifyFailure(error);
      const pause = backoff(tries);
      if (kind !== "retry" || Date.now() + pause - started > options.deadlineMs) {
        throw failureError(error, options.location, kind, options.deadlineMs);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
