// A separate process that opens a database and reports what happened, as one JSON line on stdout.
// Arguments: pglite <dataDir> [holdMs] | migrate <url> <fixture migrations folder>.
import { createSqlClient, loadMigrations, runMigrations } from "../index.ts";

const [mode, target, extra] = process.argv.slice(2);
try {
  if (mode === "pglite") {
    const client = await createSqlClient({ pglite: target as string });
    await client.query("SELECT 1");
    process.stdout.write(`${JSON.stringify({ opened: true, pid: process.pid })}\n`);
    await new Promise((resolve) => setTimeout(resolve, Number(extra ?? 0)));
    await client.close();
  } else {
    const client = await createSqlClient({ url: target as string, poolSize: 2 });
    const outcome = await runMigrations(client, await loadMigrations("fixture", extra as string));
    process.stdout.write(`${JSON.stringify(outcome)}\n`);
    await client.close();
  }
} catch (error) {
  const { code, holder, message } = error as { code?: string; holder?: { pid: number }; message: string };
  process.stdout.write(`${JSON.stringify({ code, holderPid: holder?.pid, message })}\n`);
}
