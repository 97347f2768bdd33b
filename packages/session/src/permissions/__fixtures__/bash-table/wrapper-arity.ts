import type { RowFamily } from "./row.ts";

export const WRAPPER_ARITY: RowFamily = {
  name: "Wrapper options read with their real arity",
  rows: [],
  reaches: [],
  changing: [],
};
