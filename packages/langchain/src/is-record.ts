/** A plain object (not null, not an array): the shape JSON objects and plugin results are checked against. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
