// A TypeScript module for the guard's test: loaded in the worker with tsx.
import type { UnforgetErrorCode } from "@unforget/core";
import { describeCode } from "./typed-helper.ts";

export function describeError(code: UnforgetErrorCode, times: number): string {
  return describeCode(code).repeat(times);
}
