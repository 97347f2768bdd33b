const KEPT_KEYS: ReadonlySet<string> = new Set([
  "description",
  "format",
  "enum",
  "required",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "title",
  "default",
  "example",
  "nullable",
  "propertyOrdering",
  "minProperties",
  "maxProperties",
]);

/**
 * Converts a tool's JSON Schema to the OpenAPI subset Vertex accepts in `functionDeclarations[].parameters`:
 * upper-case `type` names, `["x", "null"]` as `nullable`, `const` as a one-value string enum, nested `properties`,
 * `items` and `anyOf` converted recursively; keywords Vertex rejects (`$schema`, `additionalProperties`,
 * `$ref`, …) are dropped.
 */
export function toVertexSchema(schema: unknown): Record<string, unknown> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return {};
  const source = schema as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  const type = source.type;
  if (typeof type === "string") {
    result.type = type.toUpperCase();
  } else if (Array.isArray(type)) {
    const named = type.filter((entry): entry is string => typeof entry === "string" && entry !== "null");
    if (named[0] !== undefined) result.type = named[0].toUpperCase();
    if (type.includes("null")) result.nullable = true;
  }
  for (const [key, value] of Object.entries(source)) {
    if (KEPT_KEYS.has(key)) result[key] = value;
  }
  if ("const" in source) result.enum = [source.const];
  if (result.enum !== undefined && result.type === undefined) result.type = "STRING";
  // Vertex enums are string-only: keep them on strings, drop them elsewhere rather than fail the request.
  if (Array.isArray(result.enum) && result.type === "STRING")
    result.enum = result.enum.map((entry) => String(entry));
  else delete result.enum;
  const properties = source.properties;
  if (typeof properties === "object" && properties !== null) {
    result.properties = Object.fromEntries(
      Object.entries(properties as Record<string, unknown>).map(([name, value]) => [
        name,
        toVertexSchema(value),
      ]),
    );
  }
  if (source.items !== undefined) result.items = toVertexSchema(source.items);
  const variants = source.anyOf ?? source.oneOf;
  if (Array.isArray(variants)) result.anyOf = variants.map((variant) => toVertexSchema(variant));
  return result;
}
