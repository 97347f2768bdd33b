/** The message of anything thrown, for a sentence that quotes it. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
