import type { RowFamily } from "./row.ts";

export const BUILTINS_RUNNING_TEXT: RowFamily = {
  name: "Builtins that run text, start-up files and unset",
  rows: [],
  reaches: [],
  changing: [],
};
