/** A plain object (not null, not an array): what a tool input or a YAML mapping must be. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
