import { ToolCallError } from "./tool-errors.ts";

type Input = Record<string, unknown>;

/**
 * Readers for one call's input. The session validates input against the schema first; these checks repeat
 * the few that matter, so a caller that skips the schema still gets an error result the model can act on.
 */
export function requiredString(tool: string, input: Input, key: string): string {
  const value = input[key];
  if (typeof value !== "string") {
    throw new ToolCallError(`${tool}: "${key}" is required and must be a string (got ${describe(value)}).`);
  }
  return value;
}

export function optionalString(tool: string, input: Input, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    throw new ToolCallError(`${tool}: "${key}" must be a string when given (got ${describe(value)}).`);
  }
  return value;
}

export function optionalBoolean(tool: string, input: Input, key: string): boolean | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") {
    throw new ToolCallError(`${tool}: "${key}" must be true or false when given (got ${describe(value)}).`);
  }
  return value;
}

export function optionalInteger(
  tool: string,
  input: Input,
  key: string,
  range: { min: number; max?: number },
): number | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (
    typeof value !== "number" ||
    !Number.isSafeInteger(value) ||
    value < range.min ||
    value > (range.max ?? Infinity)
  ) {
    const bounds = range.max === undefined ? `≥ ${range.min}` : `from ${range.min} to ${range.max}`;
    throw new ToolCallError(`${tool}: "${key}" must be a whole number ${bounds} (got ${describe(value)}).`);
  }
  return value;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
