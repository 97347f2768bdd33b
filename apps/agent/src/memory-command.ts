import { stat } from "node:fs/promises";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { CommandOutput } from "./replay/replay-command.ts";
import { OptionValueError } from "./replay/replay-errors.ts";

interface ImportOptions {
  from: string;
  url?: string;
  pglite?: string;
  namespace: string;
  actor?: string;
}

/**
 * `unforget memory import --from <dir> (--url <postgres://…> | --pglite <dir>) --namespace <ns>`: copies a
 * memory dir into team memory on PostgreSQL with its history (every version, deleted memories too, with their
 * authors). Running it again copies only what is missing.
 */
export function registerMemoryCommand(program: Command, output: CommandOutput): void {
  const memory = program.command("memory").summary("team memory: move a memory dir to PostgreSQL");
  memory
    .command("import")
    .summary("copy a memory dir, with its history, into team memory on PostgreSQL")
    .requiredOption("-f, --from <dir>", "the memory dir to copy (the folder holding MEMORY.md)")
    .option(
      "--url <url>",
      "the server: postgres://user:password@host:5432/database (default: UNFORGET_MEMORY_URL)",
    )
    .option("--pglite <dir>", "instead of a server: an embedded database's data dir")
    .requiredOption("-n, --namespace <namespace>", "where the memories go: team/<team>/project/<project>")
    .option("--actor <actor>", "who the copies are recorded as (default: user:<login>)")
    .action(async (options: ImportOptions) => {
      const url = options.url ?? output.env.UNFORGET_MEMORY_URL;
      if ((url === undefined) === (options.pglite === undefined)) {
        throw new OptionValueError(
          "--url",
          "Give the database: --url postgres://… (or UNFORGET_MEMORY_URL) for a server, or --pglite <dir> for an embedded one — one of them.",
        );
      }
      const from = resolve(options.from);
      const isMemoryDir = await stat(join(from, ".unforget")).then(
        (info) => info.isDirectory(),
        () => false,
      );
      if (!isMemoryDir) {
        throw new OptionValueError(
          "--from",
          `${from} is not a memory dir (it has no .unforget folder); point --from at the folder that holds MEMORY.md.`,
        );
      }
      // Memory, the PostgreSQL store and driver load with this command, not with every start of the CLI.
      const [{ createMemoryDir }, { createPostgresMemoryStore, importMemoryHistory }, { createSqlClient }] =
        await Promise.all([
          import("@unforget/memory"),
          import("@unforget/memory-postgres"),
          import("@unforget/postgres"),
        ]);
      const source = await createMemoryDir({ root: from });
      const client = await createSqlClient(
        url === undefined ? { pglite: options.pglite as string } : { url },
      );
      try {
        const target = await createPostgresMemoryStore({
          client,
          namespaces: [options.namespace],
          actor: options.actor ?? `user:${userInfo().username}`,
        });
        const report = await importMemoryHistory(source, target, { label: from });
        output.stdout.write(
          `Imported ${report.versions} versions (${report.skipped} skipped) into ${target.location}: ${report.memories} memories${report.untracked.length > 0 ? `, ${report.untracked.length} copied without history (${report.untracked.join(", ")})` : ""}.\n`,
        );
      } finally {
        await client.close();
      }
    });
}
