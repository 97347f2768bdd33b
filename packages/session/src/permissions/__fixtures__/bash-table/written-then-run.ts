import type { RowFamily } from "./row.ts";

export const WRITTEN_THEN_RUN: RowFamily = {
  name: "Files written by a program, or reached by another path, then run",
  rows: [],
  reaches: [],
  changing: [],
};
