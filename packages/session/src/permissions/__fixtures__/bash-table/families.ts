import { BUILTINS_RUNNING_TEXT } from "./builtins-running-text.ts";
import { CONFIG_VARIABLES } from "./config-variables.ts";
import type { RowFamily } from "./row.ts";
import { WRAPPER_ARITY } from "./wrapper-arity.ts";
import { WRITTEN_THEN_RUN } from "./written-then-run.ts";

/** The families of rows kept apart from the main table, one file each. */
export const FAMILIES: RowFamily[] = [
  WRITTEN_THEN_RUN,
  BUILTINS_RUNNING_TEXT,
  WRAPPER_ARITY,
  CONFIG_VARIABLES,
];
