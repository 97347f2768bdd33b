import type { MigrationSet } from "@unforget/postgres";
import type { Command } from "commander";
import type { CommandOutput } from "./replay/replay-command.ts";
import { OptionValueError } from "./replay/replay-errors.ts";

/**
 * The schemas `unforget db sql` prints: one loader per server store (tasks adds its own line here). The stores'
 * packages (and the PostgreSQL driver behind them) load with the command, not with every start of the CLI.
 */
const SCHEMAS: ReadonlyArray<() => Promise<MigrationSet>> = [
  async () => (await import("@unforget/memory-postgres")).loadMemoryMigrations(),
];

/**
 * `unforget db sql [--component memory] [--from N]`: the SQL an operator applies by hand for stores opened
 * with `migrate: false` — each component's migrations after version N, recorded in the same bookkeeping table
 * the stores check, in one transaction under the migrations' advisory lock.
 */
export function registerDbCommand(program: Command, output: CommandOutput): void {
  const db = program.command("db").summary("the PostgreSQL schema of team memory and tasks");
  db.command("sql")
    .summary("print the SQL that creates or upgrades the schema (for migrate: false)")
    .option("-c, --component <name>", "only this component's schema (e.g. memory)")
    .option("--from <version>", "only the migrations after this version (what the database already has)", "0")
    .action(async (options: { component?: string; from: string }) => {
      const from = Number(options.from);
      if (!Number.isInteger(from) || from < 0) {
        throw new OptionValueError(
          "--from",
          `--from must be a migration number (0 or more), not ${JSON.stringify(options.from)}.`,
        );
      }
      const { migrationScript } = await import("@unforget/postgres");
      const sets = await Promise.all(SCHEMAS.map((load) => load()));
      const chosen =
        options.component === undefined ? sets : sets.filter((set) => set.component === options.component);
      if (chosen.length === 0) {
        throw new OptionValueError(
          "--component",
          `There is no component ${JSON.stringify(options.component)}; choose one of ${sets.map((set) => set.component).join(", ")}.`,
        );
      }
      for (const set of chosen) output.stdout.write(migrationScript(set, from));
    });
}
