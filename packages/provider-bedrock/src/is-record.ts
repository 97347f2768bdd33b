/** A plain object (not null, not an array). Private to this package: core keeps its own guard internal. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
