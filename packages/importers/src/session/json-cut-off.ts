/** How far a token got: whole, cut by the end of the text, or wrong where it stopped. */
type Token = "ok" | "end" | "invalid";
/** What the grammar allows next. */
type Expect = "value" | "value-or-close" | "key" | "key-or-close" | "colon" | "comma-or-close" | "done";

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const LITERALS: Readonly<Record<string, string>> = { t: "true", f: "false", n: "null" };
const isDigit = (character: string | undefined) =>
  character !== undefined && character >= "0" && character <= "9";
const isHex = (character: string | undefined) => character !== undefined && /^[0-9a-fA-F]$/.test(character);

/** The text being read and how far the reading got. */
interface Scanner {
  readonly text: string;
  index: number;
}

/** A string token from its opening quote: escapes checked, control characters refused. */
function readString(scan: Scanner): Token {
  const { text } = scan;
  scan.index++; // the opening quote
  while (scan.index < text.length) {
    const character = text[scan.index] as string;
    if (character === '"') {
      scan.index++;
      return "ok";
    }
    if (character === "\\") {
      scan.index++;
      if (scan.index >= text.length) return "end";
      if (text[scan.index] === "u") {
        for (let digit = 0; digit < 4; digit++) {
          scan.index++;
          if (scan.index >= text.length) return "end";
          if (!isHex(text[scan.index])) return "invalid";
        }
      } else if (!ESCAPES.has(text[scan.index] as string)) return "invalid";
    } else if (character < " ") return "invalid";
    scan.index++;
  }
  return "end";
}

/** One or more digits. */
function readDigits(scan: Scanner): Token {
  if (scan.index >= scan.text.length) return "end";
  if (!isDigit(scan.text[scan.index])) return "invalid";
  while (isDigit(scan.text[scan.index])) scan.index++;
  return "ok";
}

/** A number: sign, integer part without leading zeros, fraction, exponent. */
function readNumber(scan: Scanner): Token {
  const { text } = scan;
  if (text[scan.index] === "-") scan.index++;
  if (scan.index >= text.length) return "end";
  if (text[scan.index] === "0") scan.index++;
  else if (isDigit(text[scan.index])) while (isDigit(text[scan.index])) scan.index++;
  else return "invalid";
  if (text[scan.index] === ".") {
    scan.index++;
    const fraction = readDigits(scan);
    if (fraction !== "ok") return fraction;
  }
  if (text[scan.index] === "e" || text[scan.index] === "E") {
    scan.index++;
    if (text[scan.index] === "+" || text[scan.index] === "-") scan.index++;
    return readDigits(scan);
  }
  return "ok";
}

/** `true`, `false` or `null`, letter by letter. */
function readLiteral(scan: Scanner, word: string): Token {
  for (const expected of word) {
    if (scan.index >= scan.text.length) return "end";
    if (scan.text[scan.index] !== expected) return "invalid";
    scan.index++;
  }
  return "ok";
}

/**
 * Whether text that is not valid JSON is a JSON document cut off: read by the JSON grammar (RFC 8259), nothing
 * is wrong until the text ends, where a string, a number or a literal is unfinished or a bracket is open.
 * Decided from the text's structure, never from the wording of `JSON.parse`'s message, which V8 words
 * differently across Node versions. Iterative, so a deeply nested document cannot exhaust the stack.
 */
export function isCutOffJson(text: string): boolean {
  const scan: Scanner = { text, index: 0 };
  const length = text.length;

  const stack: Array<"{" | "["> = [];
  let expect: Expect = "value";
  const afterValue = (): Expect => (stack.length === 0 ? "done" : "comma-or-close");

  for (;;) {
    while (scan.index < length && WHITESPACE.has(text[scan.index] as string)) scan.index++;
    // The text ends: a cut if anything was still open or expected.
    if (scan.index >= length) return expect !== "done";
    const character = text[scan.index] as string;
    let token: Token = "ok";
    switch (expect) {
      case "done":
        return false; // more after a whole document: not a cut
      case "colon":
        if (character !== ":") return false;
        scan.index++;
        expect = "value";
        continue;
      case "comma-or-close": {
        const open = stack.at(-1);
        if (character === ",") {
          scan.index++;
          expect = open === "{" ? "key" : "value";
          continue;
        }
        if (character !== (open === "{" ? "}" : "]")) return false;
        scan.index++;
        stack.pop();
        expect = afterValue();
        continue;
      }
      case "key":
      case "key-or-close":
        if (expect === "key-or-close" && character === "}") {
          scan.index++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        if (character !== '"') return false;
        token = readString(scan);
        if (token !== "ok") return token === "end";
        expect = "colon";
        continue;
      case "value":
      case "value-or-close":
        if (expect === "value-or-close" && character === "]") {
          scan.index++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        if (character === "{" || character === "[") {
          scan.index++;
          stack.push(character);
          expect = character === "{" ? "key-or-close" : "value-or-close";
          continue;
        }
        if (character === '"') token = readString(scan);
        else if (character === "-" || isDigit(character)) token = readNumber(scan);
        else if (LITERALS[character] !== undefined) token = readLiteral(scan, LITERALS[character]);
        else return false;
        if (token !== "ok") return token === "end";
        expect = afterValue();
    }
  }
}
