/** A plain JSON object (not null, not an array): what the wire-shape checks in this package ask. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
