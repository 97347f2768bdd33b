import { statSync } from "node:fs";
import { TaskInputError } from "../task/task-errors.ts";
import type { TaskCapabilities } from "./task-capabilities.ts";
import type { AnyTaskSpec, TaskTypeDefinition, TaskTypeRegistry } from "./task-type.ts";

export type Fields = Record<string, unknown>;

export function fail(field: string, message: string): never {
  throw new TaskInputError(`${field}: ${message}`, { field });
}

export function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function requireText(spec: Fields, key: string, path = key): string {
  const value = spec[key];
  if (typeof value !== "string" || value.trim() === "")
    fail(path, `must be a non-empty string (got ${JSON.stringify(value)}).`);
  return value;
}

export function optionalText(spec: Fields, key: string, path = key): void {
  if (spec[key] !== undefined && typeof spec[key] !== "string")
    fail(path, `must be a string when given (got ${typeof spec[key]}).`);
}

export function requireFunction(value: unknown, path: string, what: string): void {
  if (typeof value !== "function") fail(path, `must be a function (${what}).`);
}

/** A whole number of milliseconds ≥ `min`; `Infinity` only where `infinite` allows it. */
export function checkDuration(
  value: unknown,
  path: string,
  options: { min?: number; infinite?: boolean } = {},
): void {
  if (value === undefined) return;
  const min = options.min ?? 1;
  const ok =
    typeof value === "number" &&
    ((options.infinite === true && value === Number.POSITIVE_INFINITY) ||
      (Number.isInteger(value) && value >= min));
  if (!ok) {
    fail(
      path,
      `must be a whole number of milliseconds ≥ ${min}${options.infinite ? " (or Infinity to turn it off)" : ""}; got ${String(value)}.`,
    );
  }
}

export function checkEnv(value: unknown, path: string): void {
  if (value === undefined) return;
  if (!isObject(value) || Object.values(value).some((entry) => typeof entry !== "string")) {
    fail(path, "must map variable names to string values.");
  }
}

/** A list of environment variable names (letters, digits and "_", not starting with a digit). */
export function checkEnvNames(value: unknown, path: string): void {
  if (value === undefined) return;
  if (
    !Array.isArray(value) ||
    value.some((name) => typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
  )
    fail(path, 'must be a list of environment variable names, e.g. ["NPM_TOKEN"].');
}

export function checkCwd(value: unknown, path: string): void {
  if (value === undefined) return;
  if (typeof value !== "string" || value === "") fail(path, "must be a directory path.");
  let isDirectory = false;
  try {
    isDirectory = statSync(value).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory)
    fail(path, `${JSON.stringify(value)} is not an existing directory; create it or pass another cwd.`);
}

export function checkCommandFields(spec: Fields, runsHere: boolean, prefix = ""): void {
  // A directory on another machine cannot be checked from here: the worker reports it when it starts.
  if (runsHere) checkCwd(spec.cwd, `${prefix}cwd`);
  else if (spec.cwd !== undefined && (typeof spec.cwd !== "string" || spec.cwd === ""))
    fail(`${prefix}cwd`, "must be a directory path.");
  checkEnv(spec.env, `${prefix}env`);
}

/** Checks what every spec shares, then the type's own fields; throws `TaskInputError` naming the first bad field. */
export function validateTaskSpec(
  spec: unknown,
  registry: TaskTypeRegistry,
  runsHere: boolean,
  capabilities: TaskCapabilities,
): asserts spec is AnyTaskSpec {
  if (!isObject(spec))
    fail("spec", 'start() needs an object such as { type: "local_bash", command: "npm test" }.');
  const definition = registry.require(spec.type);
  optionalText(spec, "description");
  checkDuration(spec.timeoutMs, "timeoutMs");
  checkDuration(spec.deadlineMs, "deadlineMs", { infinite: true });
  definition.validate(spec, runsHere, capabilities);
}

/** The one-line description a task is listed with. */
export function describeSpec(definition: TaskTypeDefinition, spec: AnyTaskSpec): string {
  if (spec.description !== undefined && spec.description.trim() !== "") return spec.description.trim();
  return definition.describe(spec);
}
