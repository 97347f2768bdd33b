import { isUnforgetError } from "@unforget/core";
import type { ImportDraft, ImportFormat, ImportLocation } from "./import-result.ts";
import { reportProblem } from "./import-result.ts";
import { exceedsNesting, MAX_NESTING } from "./nesting.ts";
import { ImportError } from "./session-errors.ts";

/**
 * Runs a whole import so that only typed errors leave it: an `UnforgetError` passes through, anything else
 * (a defect of the importer that a source value exposed) becomes an `ImportError` that says so.
 */
export function guardImport<T>(format: ImportFormat, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (isUnforgetError(error)) throw error;
    throw new ImportError(
      `The ${format} importer could not convert this input (${messageOf(error)}). This is a defect of the importer, not of your file: please report it with the file.`,
      { format, cause: error },
    );
  }
}

/**
 * Converts one source item so that a defect it exposes costs that item only: anything but an `UnforgetError`
 * that the conversion throws is reported with the item's location, and the item is skipped.
 */
export function convertItem(draft: ImportDraft, location: ImportLocation, convert: () => void): void {
  try {
    convert();
  } catch (error) {
    if (isUnforgetError(error)) throw error;
    draft.counts.invalid++;
    reportProblem(
      draft,
      "unconvertible_item",
      location,
      `The item could not be converted (${messageOf(error)}); it was skipped.`,
    );
  }
}

/** Whether an item nests no deeper than `MAX_NESTING`; a deeper one is counted, reported and must be skipped. */
export function acceptNesting(draft: ImportDraft, location: ImportLocation, value: unknown): boolean {
  if (!exceedsNesting(value)) return true;
  draft.counts.invalid++;
  reportProblem(
    draft,
    "too_deep",
    location,
    `The item nests values more than ${MAX_NESTING} levels deep, which no agent writes; it was skipped.`,
  );
  return false;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
