/** The message of anything thrown (a plugin may throw a string or an object), for use inside a sentence. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
