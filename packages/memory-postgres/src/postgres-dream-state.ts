import { randomUUID } from "node:crypto";
import type { DreamState, DreamStateStore } from "@unforget/memory";
import type { SqlClient } from "@unforget/postgres";

interface DreamRow {
  last_run_at: Date | string | null;
  sessions: string[] | string;
}

function stateOf(row: DreamRow | undefined): DreamState {
  if (row === undefined) return { sessions: [] };
  const sessions = typeof row.sessions === "string" ? (JSON.parse(row.sessions) as string[]) : row.sessions;
  return {
    sessions: Array.isArray(sessions) ? sessions : [],
    ...(row.last_run_at === null
      ? {}
      : {
          lastRunAt: (row.last_run_at instanceof Date
            ? row.last_run_at
            : new Date(row.last_run_at)
          ).toISOString(),
        }),
  };
}

/**
 * The dream's state for one namespace in `memory_dream`: updates under a row lock, the dream lock as a lease
 * (renewed while the dream runs, taken over once it lapses), reports in `memory_dream_report`.
 */
export function createPostgresDreamState(
  client: SqlClient,
  namespace: string,
  actor: string,
): DreamStateStore {
  const ensure = (database: Pick<SqlClient, "query">) =>
    database.query("INSERT INTO memory_dream (namespace) VALUES ($1) ON CONFLICT (namespace) DO NOTHING", [
      namespace,
    ]);
  return {
    location: `${client.location}#${namespace}`,
    async read() {
      const { rows } = await client.query<DreamRow>(
        "SELECT last_run_at, sessions FROM memory_dream WHERE namespace = $1",
        [namespace],
      );
      return stateOf(rows[0]);
    },
    async update(change) {
      await client.transaction(async (transaction) => {
        await ensure(transaction);
        const { rows } = await transaction.query<DreamRow>(
          "SELECT last_run_at, sessions FROM memory_dream WHERE namespace = $1 FOR UPDATE",
          [namespace],
        );
        const next = change(stateOf(rows[0]));
        await transaction.query(
          "UPDATE memory_dream SET last_run_at = $2, sessions = $3::jsonb WHERE namespace = $1",
          [namespace, next.lastRunAt ?? null, JSON.stringify(next.sessions)],
        );
      });
    },
    async withDreamLock(task, staleMs) {
      const holder = `${actor}:${randomUUID()}`;
      await ensure(client);
      const lease = async () =>
        (
          await client.query(
            `UPDATE memory_dream SET lock_holder = $2, lock_until = now() + make_interval(secs => $3::float8 / 1000)
             WHERE namespace = $1 AND (lock_holder = $2 OR lock_holder IS NULL OR lock_until < now())`,
            [namespace, holder, staleMs],
          )
        ).rowCount > 0;
      if (!(await lease())) return { locked: false };
      const renew = setInterval(() => void lease().catch(() => undefined), Math.max(1_000, staleMs / 3));
      renew.unref();
      try {
        return { locked: true, value: await task() };
      } finally {
        clearInterval(renew);
        await client.query(
          "UPDATE memory_dream SET lock_holder = NULL, lock_until = NULL WHERE namespace = $1 AND lock_holder = $2",
          [namespace, holder],
        );
      }
    },
    async saveReport(at, markdown) {
      const { rows } = await client.query<{ id: string }>(
        "INSERT INTO memory_dream_report (namespace, ran_at, markdown) VALUES ($1, $2, $3) RETURNING id::text AS id",
        [namespace, at, markdown],
      );
      return `memory_dream_report:${rows[0]?.id}`;
    },
  };
}
