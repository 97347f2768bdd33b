import { createHash } from "node:crypto";
import { type SqlClient, SqlError, type SqlQueryable } from "@unforget/postgres";
import PgBoss from "pg-boss";

/** pg-boss's whole view of the database: one function, run on our client or inside one of its transactions. */
export function bossDatabase(database: SqlQueryable): PgBoss.Db {
  return {
    async executeSql(text, values) {
      const result = await database.query(text, values);
      return { rows: result.rows };
    },
  };
}

/** The advisory lock that queue creations take, one at a time across every process on the database. */
const QUEUE_LOCK = BigInt.asIntN(
  64,
  BigInt(`0x${createHash("sha256").update("unforget.tasks.create_queue").digest("hex").slice(0, 16)}`),
).toString();

/**
 * pg-boss on our client: it opens no pool or connection of its own, so it runs wherever the client does (a
 * server, or PGlite in this process), and a task row and its job commit in one transaction. Cron scheduling
 * is off; its maintenance (expiring jobs past their deadline, archiving) runs where `supervise` is true.
 */
export async function startBoss(client: SqlClient, options: { supervise: boolean }): Promise<PgBoss> {
  for (let attempt = 1; ; attempt++) {
    const boss = new PgBoss({
      db: bossDatabase(client),
      schedule: false,
      supervise: options.supervise,
      migrate: true,
    });
    // Errors of its background maintenance are its to retry; they must not crash the process.
    boss.on("error", () => undefined);
    try {
      await boss.start();
      return boss;
    } catch (error) {
      // Processes that install pg-boss on a new database at the same moment collide in the catalog (a unique
      // violation on its schema's name) despite its lock, and its start gives up; the next start finds it
      // installed. A started instance cannot start again, hence a new one.
      if (attempt >= 3 || !(error instanceof SqlError && error.sqlState === "23505")) throw error;
    }
  }
}

/**
 * Creates the pg-boss queues that do not exist yet, one creation at a time across every process: each is DDL
 * (a partition of pg-boss's job table and its constraints), and two at once deadlock each other in the
 * catalog (the server breaks it and the client retries, but the log fills with it at every start). The
 * common case, every queue already there, takes no lock.
 */
export async function createQueues(
  client: SqlClient,
  boss: PgBoss,
  names: readonly string[],
  options: { retryLimit: number },
): Promise<void> {
  const missing: string[] = [];
  for (const name of names) if ((await boss.getQueue(name)) === null) missing.push(name);
  if (missing.length === 0) return;
  await client.transaction(async (transaction) => {
    await transaction.query("SELECT pg_advisory_xact_lock($1::bigint)", [QUEUE_LOCK]);
    // An instance that is never started, on this transaction: pg-boss's own statement, under the lock.
    const creator = new PgBoss({ db: bossDatabase(transaction), schedule: false, supervise: false });
    // One that another process made while this one waited is skipped by pg-boss (ON CONFLICT DO NOTHING).
    for (const name of missing) await creator.createQueue(name, { name, retryLimit: options.retryLimit });
  });
}
