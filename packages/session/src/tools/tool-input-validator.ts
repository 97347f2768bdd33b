import type { Tool } from "@unforget/core";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { errorText } from "../loop/session-errors.ts";

/** The outcome of checking one call's input against its tool's schema. */
export type InputCheck = { ok: true; input: Record<string, unknown> } | { ok: false; problem: string };

const AJV_OPTIONS = {
  // Tool schemas come from many authors (MCP servers included): unknown keywords and formats are not errors.
  strict: false,
  allErrors: true,
  validateFormats: false,
} as const;

const MAX_LISTED_ERRORS = 8;

/**
 * Validates tool inputs with ajv 8 (draft-07 and older by default, draft 2020-12 when the schema says so), one
 * compiled validator per tool object. Never throws: a schema that does not compile is reported as the call's
 * problem, so the model learns the tool is unusable instead of the loop stopping. ajv loads with the first call
 * (a session that calls no tool, or not yet, never pays for it).
 */
export class ToolInputValidator {
  readonly #compiled = new WeakMap<Tool, ValidateFunction | { error: string }>();
  #draft07: Ajv | undefined;
  #draft2020: Ajv2020 | undefined;

  async check(tool: Tool, input: unknown): Promise<InputCheck> {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return {
        ok: false,
        problem: `The input of ${tool.name} must be a JSON object, but it was ${describeJson(input)}. Call ${tool.name} again with an object that matches its input schema.`,
      };
    }
    const record = input as Record<string, unknown>;
    if (typeof record._raw === "string" && Object.keys(record).length === 1) {
      return {
        ok: false,
        problem: `The input of ${tool.name} was not valid JSON (${truncate(record._raw, 200)}). Call ${tool.name} again with a complete JSON object.`,
      };
    }
    const validate = await this.#validator(tool);
    if ("error" in validate) {
      return {
        ok: false,
        problem: `${tool.name} cannot be called: its input schema is invalid (${validate.error}). Use another tool; the tool's author must fix its schema.`,
      };
    }
    if (validate(record)) return { ok: true, input: record };
    return {
      ok: false,
      problem: `The input of ${tool.name} does not match its schema: ${formatErrors(validate.errors ?? [])}. Fix the input and call ${tool.name} again.`,
    };
  }

  async #validator(tool: Tool): Promise<ValidateFunction | { error: string }> {
    const cached = this.#compiled.get(tool);
    if (cached) return cached;
    let compiled: ValidateFunction | { error: string };
    try {
      compiled = (await this.#ajvFor(tool.inputSchema)).compile(tool.inputSchema);
    } catch (error) {
      compiled = { error: errorText(error) };
    }
    this.#compiled.set(tool, compiled);
    return compiled;
  }

  async #ajvFor(schema: Record<string, unknown>): Promise<Ajv | Ajv2020> {
    const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
    if (dialect.includes("2020-12") || dialect.includes("2019-09")) {
      if (this.#draft2020 === undefined) {
        const { Ajv2020 } = (await import("ajv/dist/2020.js")).default;
        this.#draft2020 ??= new Ajv2020(AJV_OPTIONS);
      }
      return this.#draft2020;
    }
    if (this.#draft07 === undefined) {
      // ajv is CommonJS: its `module.exports` (`default`) carries the class. A bundler's chunk for a module loaded
      // this way exports only `default` (esbuild's code splitting), so the named export is not read.
      const { Ajv } = (await import("ajv")).default;
      this.#draft07 ??= new Ajv(AJV_OPTIONS);
    }
    return this.#draft07;
  }
}

function formatErrors(errors: readonly ErrorObject[]): string {
  const parts = errors.slice(0, MAX_LISTED_ERRORS).map((error) => {
    const where = error.instancePath === "" ? "the input" : error.instancePath;
    const params = error.params as Record<string, unknown>;
    if (error.keyword === "required")
      return `${where} is missing the required property "${String(params.missingProperty)}"`;
    if (error.keyword === "additionalProperties") {
      return `${where} has a property the schema does not allow: "${String(params.additionalProperty)}"`;
    }
    if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
      return `${where} must be one of ${params.allowedValues.map((value) => JSON.stringify(value)).join(", ")}`;
    }
    return `${where} ${error.message ?? "is invalid"}`;
  });
  const more = errors.length > MAX_LISTED_ERRORS ? `; and ${errors.length - MAX_LISTED_ERRORS} more` : "";
  return `${parts.join("; ")}${more}`;
}

function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value === undefined) return "missing";
  return `a ${typeof value}`;
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`;
}
