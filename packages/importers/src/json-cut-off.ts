import { type ParseError, parse, printParseErrorCode } from "jsonc-parser";

/** Errors about a token the text ends inside: a string, a number. */
const UNFINISHED_TOKEN: ReadonlySet<string> = new Set(["UnexpectedEndOfString", "UnexpectedEndOfNumber"]);
const LITERALS = ["true", "false", "null"];

/**
 * Whether text that is not valid JSON is a JSON document cut off: nothing is wrong with it until its end, where
 * a string, a number or a literal is unfinished or brackets are left open. Decided from the text's structure
 * (jsonc-parser's scanner in strict JSON mode), never from the wording of `JSON.parse`'s message, which differs
 * between V8 versions (Node 20 and 22 word the same cut differently).
 */
export function isCutOffJson(text: string): boolean {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first === undefined) return false;
  const end = text.trimEnd().length;
  const reachesEnd = first.offset + first.length >= end;
  const code = printParseErrorCode(first.error);
  if (UNFINISHED_TOKEN.has(code)) return reachesEnd;
  if (code === "InvalidSymbol") {
    // `tr`, `fals`, `nu` or a lone `-` at the end: a literal or a number cut short; `bad` or `NaN` is wrong.
    const symbol = text.slice(first.offset, end);
    return reachesEnd && (symbol === "-" || LITERALS.some((literal) => literal.startsWith(symbol)));
  }
  // Anything else (a value, a colon, a bracket expected) is a cut only where nothing follows it.
  return first.offset >= end;
}
