import type { ImportDraft, ImportLocation } from "./import-result.ts";
import { reportProblem } from "./import-result.ts";

/** The time of an item when neither it nor any item before it has a usable date. */
export const EPOCH = new Date(0).toISOString();

/**
 * The source's timestamp as ISO 8601 when it is a usable date (an ISO string — without a zone it is read as
 * UTC, so imports do not depend on the machine's time zone — or seconds or milliseconds since the epoch).
 * Undefined when it is absent or unusable; a value that is present but unusable (a number outside the date
 * range, an object) is reported. The first usable date becomes the import's `startedAt`.
 */
export function readTimestamp(
  draft: ImportDraft,
  value: unknown,
  location: ImportLocation,
): string | undefined {
  const parsed = parseSourceTimestamp(value);
  if (parsed !== undefined) {
    draft.startedAt ??= parsed;
    return parsed;
  }
  if (value !== undefined && value !== null && value !== "") {
    reportProblem(
      draft,
      "invalid_timestamp",
      location,
      `The timestamp ${describeValue(value)} is not a date; it was ignored (the item keeps the time of the item before it).`,
    );
  }
  return undefined;
}

/** The timestamp as ISO 8601, or undefined when the value is not a usable date. Never throws. */
export function parseSourceTimestamp(value: unknown): string | undefined {
  let milliseconds: number;
  if (typeof value === "string" && value.length > 0) {
    milliseconds = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  } else if (typeof value === "number" && Number.isFinite(value)) {
    milliseconds = value < 1e12 ? value * 1000 : value;
  } else {
    return undefined;
  }
  const date = new Date(milliseconds);
  // Outside ±8.64e15 ms a Date is invalid, and toISOString would throw.
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return Array.isArray(value) ? "(an array)" : `(${typeof value === "object" ? "an object" : typeof value})`;
}
