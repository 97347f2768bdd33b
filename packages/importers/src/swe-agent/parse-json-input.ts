import type { ImportFormat } from "../shared/import-result.ts";
import { ImportError } from "../shared/session-errors.ts";

/** Parses a JSON string (or passes a parsed value through), throwing `ImportError` naming the expected format. */
export function parseJsonInput(json: unknown, format: ImportFormat, expected: string): unknown {
  if (typeof json !== "string") return json;
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new ImportError(
      `The ${format} input is not valid JSON (${error instanceof Error ? error.message : String(error)}); expected ${expected}.`,
      {
        format,
        cause: error,
      },
    );
  }
}
