/** One row of the Bash gate's table: a command and what the narrow and the bypass policy must answer. */
export const A = "allow";
export const Q = "ask";
export const D = "deny";
export type Outcome = typeof A | typeof Q | typeof D;
export type Row = [command: string, narrow: Outcome, bypass: Outcome];

/**
 * A family of rows for one mechanism of bash's run-time. Kept in files of their own so that each family can grow
 * without touching the others; the table test runs every row through the gate and in real bash.
 */
export interface RowFamily {
  /** The mechanism, named in failures. */
  name: string;
  rows: Row[];
  /**
   * Rows that bash must be seen to reach `rm` (or `git push`) with: the positive control proving that each asked
   * row stands for a real way to run the denied program, not a command bash would refuse anyway.
   */
  reaches: string[];
  /** Commands that change bash's state that decides what later commands run: leaves for the gate's property. */
  changing: string[];
}
