import type { ErrorObject, ValidateFunction } from "ajv";
import { distance as editDistance } from "fastest-levenshtein";
import { MAX_WINDOW, MIN_WINDOW } from "../../parse-window.ts";
import { SettingsError } from "../agent-errors.ts";
import { SETTINGS_SCHEMA } from "./settings-json-schema.ts";

/**
 * ajv's validator for `SETTINGS_SCHEMA`, compiled when the app is built (`pnpm generate`), not at start-up; loaded
 * with the first settings file read (50 kB of code that a run without settings files never needs).
 */
async function loadValidator(): Promise<ValidateFunction> {
  return (await import("./settings-validator.generated.ts")).validate as ValidateFunction;
}

/** `/compaction/threshold` → `compaction.threshold`, `/plugins/0` → `plugins[0]`. */
export function keyOf(instancePath: string, property?: string): string {
  const parts = instancePath.split("/").slice(1);
  if (property !== undefined) parts.push(property);
  return parts
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((key, part) => (/^\d+$/.test(part) ? `${key}[${part}]` : key ? `${key}.${part}` : part), "");
}

function schemaAt(instancePath: string): Record<string, unknown> | undefined {
  let node: Record<string, unknown> | undefined = SETTINGS_SCHEMA;
  for (const part of instancePath.split("/").slice(1)) {
    const properties = node?.properties as Record<string, Record<string, unknown>> | undefined;
    node = properties?.[part] ?? (node?.additionalProperties as Record<string, unknown> | undefined);
  }
  return node;
}

/** The closest known name, when it is close enough to be a typo. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

function describe(error: ErrorObject): { key: string; text: string } {
  if (error.keyword === "additionalProperties") {
    const property = String(error.params.additionalProperty);
    const known = Object.keys((schemaAt(error.instancePath)?.properties as object | undefined) ?? {});
    const suggestion = closestName(property, known);
    const parent = keyOf(error.instancePath);
    return {
      key: keyOf(error.instancePath, property),
      text: `"${property}" is not a setting${parent ? ` of ${parent}` : ""}${
        suggestion ? `; did you mean "${suggestion}"?` : `; the settings are ${known.join(", ")}.`
      }`,
    };
  }
  const key = keyOf(error.instancePath) || "(the file)";
  if (error.keyword === "enum")
    return {
      key,
      text: `${key} must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ")}.`,
    };
  if (error.keyword === "oneOf")
    return {
      key,
      text:
        key === "contextWindow"
          ? `${key} must be a number of tokens from ${MIN_WINDOW} to ${MAX_WINDOW}, or a string such as "200K" or "1M".`
          : `${key} must be {"percent": 1-100} or {"tokens": a whole number of at least 1000}.`,
    };
  return { key, text: `${key} ${error.message ?? "is not valid"}.` };
}

/** Throws a `SettingsError` naming the file and the first bad key when `json` is not valid settings. */
export async function checkSettings(json: unknown, file: string): Promise<void> {
  const validate = await loadValidator();
  if (validate(json)) return;
  // oneOf reports each branch's failure as well; the oneOf message says it all.
  const errors = validate.errors ?? [];
  const oneOf = errors.find((error) => error.keyword === "oneOf");
  const first =
    oneOf && errors.every((error) => error === oneOf || error.instancePath.startsWith(oneOf.instancePath))
      ? oneOf
      : errors.find((error) => error.keyword !== "oneOf");
  const { key, text } = describe(first ?? errors[0]!);
  throw new SettingsError(`${file}: ${text}`, { file, key });
}
