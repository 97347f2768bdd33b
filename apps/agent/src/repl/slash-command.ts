import type { ReplController } from "./repl-controller.ts";

/** A slash command: what `/help` lists and what runs. */
export interface SlashCommand {
  name: string;
  /** Other names it answers to. */
  aliases?: readonly string[];
  /** The arguments, for `/help`. */
  usage?: string;
  summary: string;
  /** True when it cannot run while a turn runs (it changes the session). */
  whileIdle?: boolean;
  run(controller: ReplController, args: string): Promise<void>;
}

/** Prints a command's output. */
export function print(controller: ReplController, text: string): void {
  controller.store.print({ kind: "output", text });
}

/** The open session and its environment; throws while the session is still opening. */
export function needSession(controller: ReplController) {
  const { session, environment } = controller;
  if (!session || !environment) throw new Error("the session is not open yet.");
  return { session, environment };
}

/** Rows as aligned columns (the first row is the header). */
export function table(rows: readonly (readonly string[])[]): string {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
