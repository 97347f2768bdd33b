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

/**
 * Whether text that is not valid JSON is a JSON document cut off: read by the JSON grammar (RFC 8259), nothing
 * is wrong until the text ends, where a string, a number or a literal is unfinished or a bracket is open.
 * Decided from the text's structure, never from the wording of `JSON.parse`'s message, which V8 words
 * differently across Node versions. Iterative, so a deeply nested document cannot exhaust the stack.
 */
export function isCutOffJson(text: string): boolean {
  let index = 0;
  const length = text.length;

  const string = (): Token => {
    index++; // the opening quote
    while (index < length) {
      const character = text[index] as string;
      if (character === '"') {
        index++;
        return "ok";
      }
      if (character === "\\") {
        index++;
        if (index >= length) return "end";
        if (text[index] === "u") {
          for (let digit = 0; digit < 4; digit++) {
            index++;
            if (index >= length) return "end";
            if (!isHex(text[index])) return "invalid";
          }
        } else if (!ESCAPES.has(text[index] as string)) return "invalid";
      } else if (character < " ") return "invalid";
      index++;
    }
    return "end";
  };

  const digits = (): Token => {
    if (index >= length) return "end";
    if (!isDigit(text[index])) return "invalid";
    while (isDigit(text[index])) index++;
    return "ok";
  };

  const number = (): Token => {
    if (text[index] === "-") index++;
    if (index >= length) return "end";
    if (text[index] === "0") index++;
    else if (isDigit(text[index])) while (isDigit(text[index])) index++;
    else return "invalid";
    if (text[index] === ".") {
      index++;
      const fraction = digits();
      if (fraction !== "ok") return fraction;
    }
    if (text[index] === "e" || text[index] === "E") {
      index++;
      if (text[index] === "+" || text[index] === "-") index++;
      return digits();
    }
    return "ok";
  };

  const literal = (word: string): Token => {
    for (const expected of word) {
      if (index >= length) return "end";
      if (text[index] !== expected) return "invalid";
      index++;
    }
    return "ok";
  };

  const stack: Array<"{" | "["> = [];
  let expect: Expect = "value";
  const afterValue = (): Expect => (stack.length === 0 ? "done" : "comma-or-close");

  for (;;) {
    while (index < length && WHITESPACE.has(text[index] as string)) index++;
    // The text ends: a cut if anything was still open or expected.
    if (index >= length) return expect !== "done";
    const character = text[index] as string;
    let token: Token = "ok";
    switch (expect) {
      case "done":
        return false; // more after a whole document: not a cut
      case "colon":
        if (character !== ":") return false;
        index++;
        expect = "value";
        continue;
      case "comma-or-close": {
        const open = stack.at(-1);
        if (character === ",") {
          index++;
          expect = open === "{" ? "key" : "value";
          continue;
        }
        if (character !== (open === "{" ? "}" : "]")) return false;
        index++;
        stack.pop();
        expect = afterValue();
        continue;
      }
      case "key":
      case "key-or-close":
        if (expect === "key-or-close" && character === "}") {
          index++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        if (character !== '"') return false;
        token = string();
        if (token !== "ok") return token === "end";
        expect = "colon";
        continue;
      case "value":
      case "value-or-close":
        if (expect === "value-or-close" && character === "]") {
          index++;
          stack.pop();
          expect = afterValue();
          continue;
        }
        if (character === "{" || character === "[") {
          index++;
          stack.push(character);
          expect = character === "{" ? "key-or-close" : "value-or-close";
          continue;
        }
        if (character === '"') token = string();
        else if (character === "-" || isDigit(character)) token = number();
        else if (LITERALS[character] !== undefined) token = literal(LITERALS[character]);
        else return false;
        if (token !== "ok") return token === "end";
        expect = afterValue();
    }
  }
}
