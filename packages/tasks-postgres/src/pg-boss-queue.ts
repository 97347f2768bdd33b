import type { SqlClient, SqlQueryable } from "@unforget/postgres";
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

/**
 * pg-boss on our client: it opens no pool or connection of its own, so it runs wherever the client does (a
 * server, or PGlite in this process), and a task row and its job commit in one transaction. Cron scheduling
 * is off; its maintenance (expiring jobs past their deadline, archiving) runs where `supervise` is true.
 */
export async function startBoss(client: SqlClient, options: { supervise: boolean }): Promise<PgBoss> {
  const boss = new PgBoss({
    db: bossDatabase(client),
    schedule: false,
    supervise: options.supervise,
    migrate: true,
  });
  // Errors of its background maintenance are its to retry; they must not crash the process.
  boss.on("error", () => undefined);
  await boss.start();
  return boss;
}
