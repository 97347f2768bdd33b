import { readFile } from "node:fs/promises";
import type { ParseError } from "jsonc-parser";
import { SettingsError } from "./agent-errors.ts";

type Jsonc = typeof import("jsonc-parser");

/** What each of jsonc-parser's error codes means, in words (`ParseErrorCode`, by number). */
const PROBLEMS: Readonly<Record<number, string>> = {
  1: "this is not a JSON value (strings need double quotes; true, false and null are lower case)",
  2: "this number is not written as JSON writes numbers",
  3: "a property name in double quotes was expected",
  4: "a value was expected",
  5: "a colon was expected after the property name",
  6: "a comma was expected",
  7: "a closing } was expected",
  8: "a closing ] was expected",
  9: "nothing may follow the end of the JSON value",
  10: "comments are not allowed in JSON",
  11: "a comment is not closed",
  12: "a string is not closed",
  13: "a number ends too early",
  14: "a \\u escape needs four hexadecimal digits",
  15: 'this escape is not one JSON knows (\\n, \\t, \\", \\\\, \\/, \\b, \\f, \\r, \\uXXXX)',
  16: "a string may not contain a line break or a control character (write \\n)",
};

/** The 1-based line and column of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

/**
 * Where JSON text that `JSON.parse` refused breaks, and why, as a person reads it: "line 2, column 3: a comma was
 * expected". Node's own messages give a character position (or none), so the text is parsed again by
 * jsonc-parser (loaded only here), which reports the offset and the kind of each error.
 */
export async function describeJsonError(text: string): Promise<string> {
  if (text.trim() === "") return "the text is empty (an empty object is {})";
  // The bundle's chunk of a CommonJS package exports it as `default` (decision 0022).
  const module = (await import("jsonc-parser")) as Jsonc & { default?: Jsonc };
  const jsonc = module.default ?? module;
  const errors: ParseError[] = [];
  jsonc.parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first === undefined) return "the text is not valid JSON";
  const { line, column } = lineAndColumn(text, first.offset);
  // A property name expected where the object closes: a comma too many.
  const problem =
    first.error === 3 && text[first.offset] === "}"
      ? "a comma before } is not allowed in JSON"
      : (PROBLEMS[first.error] ?? "the text is not valid JSON here");
  return `line ${line}, column ${column}: ${problem}`;
}

/**
 * An MCP config file that could not be read, as a `SettingsError`; a file that is not JSON says where it breaks
 * (the MCP package quotes the parser's character position).
 */
export async function mcpFileError(file: string, error: unknown): Promise<SettingsError> {
  const key = (error as { key?: string }).key ?? "";
  if ((error as { cause?: unknown }).cause instanceof SyntaxError) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text !== undefined)
      return new SettingsError(`${file} is not valid JSON, ${await describeJsonError(text)}; fix the file.`, {
        file,
        key,
        cause: error,
      });
  }
  return new SettingsError((error as Error).message, { file, key, cause: error });
}
