import type { SyntaxNode, Word } from "unbash";
import { DECLARING_BUILTINS } from "./bash-tables.ts";
import { clip } from "./shell-words.ts";

// Text bash evaluates a second time: arithmetic (`$((v))`, `((v))`, `let v`, `[[ v -eq 0 ]]`, `${s:v}`, `a[v]=1`,
// `${a[v]}`, `declare -i x=v`), a variable name (`${!v}`, `[[ -v $v ]]`) or a prompt (`${p@P}`). A variable's value
// read there is evaluated again, and a `$(…)` built into it at run time then runs. So every variable such text reads
// must have a value known from the same script; otherwise the command is unresolved.

/** What a variable's value must be where it is read a second time. */
export type Reading = "number" | "name" | "prompt";

/** The range of the script's text an assignment lasts in (a subshell, a substitution, or the whole script). */
export interface Scope {
  from: number;
  to: number;
}

interface Assigned {
  name: string;
  value: string | undefined;
  at: number;
  always: boolean;
  scope: Scope | undefined;
}

interface Read {
  name: string;
  reading: Reading;
  at: number;
  what: string;
}

/** Variables bash itself keeps numeric, and special parameters that are always numbers. */
const NUMERIC = new Set([
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "LINENO",
  "BASHPID",
  "PPID",
  "UID",
  "EUID",
  "#",
  "?",
  "$",
  "!",
]);

/** True for a shell variable's name (what `${!v}` and a bare word in arithmetic refer to). */
const isName = (value: string) => /^[A-Za-z_]\w*$/.test(value);

/** True for text arithmetic evaluates without reading any variable: numbers and operators only. */
export const isPlainNumber = (value: string) =>
  /^[\s\d+\-*/%()<>=!&|^~?:,]*$/.test(value.replace(/\b(?:\d+#[\w@]+|0[xX][0-9a-fA-F]+)\b/g, "0"));

const fits: Record<Reading, (value: string) => boolean> = {
  number: isPlainNumber,
  name: isName,
  prompt: (value) => !/[$`]/.test(value),
};

/** One script's assignments and second readings, judged when the whole script has been walked. */
export class EvaluatedTwice {
  private readonly assigned: Assigned[] = [];
  private readonly reads: Read[] = [];
  private readonly integers = new Set<string>();
  private readonly associative = new Set<string>();
  /** Subscripts, judged at the end: an associative array's subscript is a key, not arithmetic. */
  private readonly subscripts: {
    array: string;
    text: string;
    at: number;
    always: boolean;
    scope: Scope | undefined;
    what: string;
  }[] = [];
  /** Why the script is unresolved, for reasons known while walking. */
  readonly unresolved: string[] = [];

  /** A variable set: `value` is its text when known (a plain assignment of a literal), else undefined. */
  assign(
    name: string,
    value: string | undefined,
    at: number,
    always: boolean,
    scope: Scope | undefined,
  ): void {
    this.assigned.push({ name: name.replace(/(\+?=|\[).*$/s, ""), value, at, always, scope });
  }

  /** A variable declared integer (`declare -i x`): every value later assigned to it is evaluated as arithmetic. */
  integer(name: string): void {
    this.integers.add(name);
  }

  /** An array declared associative (`declare -A m`). */
  associate(name: string): void {
    this.associative.add(name);
  }

  /** The subscript of `array` (`a[…]=`, `${a[…]}`), arithmetic unless the array is associative. */
  subscript(
    array: string,
    text: string,
    at: number,
    always: boolean,
    scope: Scope | undefined,
    what: string,
  ): void {
    this.subscripts.push({ array, text, at, always, scope, what });
  }

  /** A variable whose value bash evaluates again as `reading`. */
  read(name: string, reading: Reading, at: number, what: string): void {
    this.reads.push({ name, reading, at, what });
  }

  /** Text bash will evaluate as arithmetic; undefined when the text itself is only known when the command runs. */
  arithmetic(
    text: string | undefined,
    at: number,
    always: boolean,
    scope: Scope | undefined,
    what: string,
  ): void {
    if (text === undefined) {
      this.opaque(what);
      return;
    }
    const local = new Set<string>();
    const tokens = /\$\{([^}]*)\}|\$([A-Za-z_]\w*)|\$\(\(|\$\(|`|\$([^\s])|([A-Za-z_]\w*)|\d[\w#@]*/g;
    for (const match of text.matchAll(tokens)) {
      const [token, braced, simple, special, bare] = match;
      const end = (match.index ?? 0) + token.length;
      if (token === "$((" || /^\d/.test(token)) continue;
      if (token === "$(" || token === "`") this.opaque(what);
      else if (braced !== undefined) {
        if (/^#[A-Za-z_]\w*$|^[#?$!]$/.test(braced)) continue;
        if (isName(braced)) this.read(braced, "number", at, what);
        else this.opaque(what);
      } else if (simple !== undefined) this.read(simple, "number", at, what);
      else if (special !== undefined) {
        if (!NUMERIC.has(special)) this.opaque(what);
      } else if (bare !== undefined) {
        const after = text.slice(end);
        const before = text.slice(0, match.index).trimEnd();
        // `i=…` first in the text (or after `,`, `;`, `(`) sets i before anything reads it, unless it reads i.
        const value = after.split(/[,;]/)[0] ?? "";
        const first = /^\s*=(?!=)/.test(after) && /(^|[,;(])$/.test(before);
        if (
          first &&
          !local.has(bare) &&
          !new RegExp(`\\b${bare}\\b`).test(value.slice(value.indexOf("=") + 1))
        ) {
          local.add(bare);
          this.assign(bare, "0", at, always, scope);
          continue;
        }
        if (!local.has(bare)) this.read(bare, "number", at, what);
        if (/^\s*(\+\+|--|[-+*/%&|^]?=(?!=)|<<=|>>=)/.test(after) || /(\+\+|--)$/.test(before))
          this.assign(bare, "0", at, always, scope);
      }
    }
  }

  private opaque(what: string): void {
    this.unresolved.push(
      `bash evaluates \`${clip(what)}\` a second time, and what it evaluates is only known when it runs: a \`$(…)\` in it would run`,
    );
  }

  /**
   * Text run inside the script (`eval`, a trap, a callback) may set a variable at any point: each one it sets is
   * set to a value not known in `outer`, and one it declares integer is integer there too.
   */
  carryInto(outer: EvaluatedTwice): void {
    for (const { name } of this.assigned) outer.assign(name, undefined, 0, false, undefined);
    for (const name of this.integers) outer.integer(name);
  }

  /** The reasons the script is unresolved, once it has been walked whole. */
  finish(): string[] {
    for (const { array, text, at, always, scope, what } of this.subscripts)
      if (!this.associative.has(array)) this.arithmetic(text, at, always, scope, what);
    const reasons = [...this.unresolved];
    for (const read of this.reads) {
      if (
        read.reading === "number" &&
        NUMERIC.has(read.name) &&
        !this.assigned.some((a) => a.name === read.name)
      )
        continue;
      if (this.known(read)) continue;
      reasons.push(
        `bash evaluates \`${clip(read.what)}\` a second time, reading ${read.name}, whose value is not known before it runs: a \`$(…)\` in it would run`,
      );
    }
    for (const assignment of this.assigned)
      if (
        this.integers.has(assignment.name) &&
        (assignment.value === undefined || !isPlainNumber(assignment.value))
      )
        reasons.push(
          `${assignment.name} is an integer variable, so bash evaluates what is assigned to it, which is only known when it runs`,
        );
    return reasons;
  }

  /** Every assignment of the variable fits, and one that always runs comes before the reading, where it lasts. */
  private known(read: Read): boolean {
    const all = this.assigned.filter((assignment) => assignment.name === read.name);
    return (
      all.length > 0 &&
      all.every((assignment) => assignment.value !== undefined && fits[read.reading](assignment.value)) &&
      all.some(
        (assignment) =>
          assignment.always &&
          assignment.at < read.at &&
          assignment.scope !== undefined &&
          read.at >= assignment.scope.from &&
          read.at < assignment.scope.to,
      )
    );
  }
}

/** Where a node is met: the script's text, whether it always runs, and the scope an assignment there lasts in. */
export interface TwicePlace {
  readonly source: string;
  readonly always: boolean;
  readonly scope: Scope | undefined;
}

/** For text evaluated twice: an assignment counts where it runs whenever its function body (or script) runs. */
export function twicePlace(place: {
  readonly source: string;
  readonly settled: boolean;
  readonly scope: Scope | undefined;
  readonly body: Scope | undefined;
}): TwicePlace {
  const { scope, body } = place;
  const inner = scope !== undefined && body !== undefined && scope.from <= body.from ? body : scope;
  return { source: place.source, always: place.settled, scope: inner };
}

const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const unquoted = (text: string) => text.replace(/["']/g, "");

/** Records what one node makes bash evaluate a second time, and the variables it assigns. */
export function noteEvaluatedTwice(
  twice: EvaluatedTwice,
  node: SyntaxNode,
  place: TwicePlace,
  decode: (word: Word) => string | undefined,
): void {
  const arithmetic = (text: string | undefined, what = text ?? "") =>
    twice.arithmetic(text, node.pos, place.always, place.scope, what);
  switch (node.type) {
    case "ArithmeticExpansion":
      arithmetic(node.text);
      return;
    case "ArithmeticCommand":
      arithmetic(node.body, `((${node.body}))`);
      return;
    case "ArithmeticFor": {
      const parts = [node.initialize, node.test, node.update].map((part) =>
        part === undefined ? "" : place.source.slice(part.pos, part.end),
      );
      arithmetic(parts.join(";"), `for ((${parts.join("; ")}))`);
      return;
    }
    case "TestBinary":
      if (ARITHMETIC_TESTS.has(node.operator))
        for (const side of [node.left, node.right])
          arithmetic(
            unquoted(side.text),
            `[[ ${clip(node.left.text)} ${node.operator} ${clip(node.right.text)} ]]`,
          );
      return;
    case "TestUnary":
      if (node.operator === "-v") variableName(twice, node.operand.text, node.pos, arithmetic);
      return;
    case "ParameterExpansion": {
      const { operation, index } = node;
      if (node.prefix === "!" && !/[@*]\]?\}$/.test(node.text) && isName(node.parameter))
        twice.read(node.parameter, "name", node.pos, node.text);
      if (index !== undefined && !/^[@*]$/.test(index.text))
        twice.subscript(node.parameter, unquoted(index.text), node.pos, place.always, place.scope, node.text);
      if (operation?.type === "Slice") {
        arithmetic(unquoted(operation.offset.text), node.text);
        if (operation.length !== undefined) arithmetic(unquoted(operation.length.text), node.text);
      }
      if (operation?.type === "Transform" && /P/.test(operation.operand.value))
        twice.read(node.parameter, "prompt", node.pos, node.text);
      return;
    }
    case "For": {
      // A loop over numbers written out sets its variable to a number each time.
      const words = node.wordlist?.map(decode);
      const numbers =
        words !== undefined &&
        words.length > 0 &&
        words.every((word) => word !== undefined && /^\d+$/.test(word));
      twice.assign(decode(node.name) ?? "", numbers ? "0" : undefined, node.pos, place.always, place.scope);
      return;
    }
    case "Assignment": {
      const value = node.value;
      const known =
        value.type === "ArrayValue"
          ? undefined
          : value.parts?.every(
                (part) =>
                  part.type === "ArithmeticExpansion" ||
                  (part.type === "Literal" && /^\d*$/.test(part.value)),
              )
            ? "0"
            : decode(value);
      twice.assign(
        node.name,
        node.index === undefined && node.append !== true ? known : undefined,
        node.pos,
        place.always,
        place.scope,
      );
      if (node.index !== undefined)
        twice.subscript(node.name, unquoted(node.index.text), node.pos, place.always, place.scope, node.text);
      return;
    }
  }
}

/** A variable name bash reads, subscript and all (`[[ -v name ]]`, `test -v name`). */
function variableName(
  twice: EvaluatedTwice,
  text: string,
  at: number,
  arithmetic: (text: string | undefined, what?: string) => void,
): void {
  const name = unquoted(text);
  const expanded = /^\$\{?([A-Za-z_]\w*)\}?$/.exec(name);
  if (expanded?.[1] !== undefined) twice.read(expanded[1], "name", at, text);
  else if (/[$`]/.test(name)) arithmetic(undefined, text);
  else {
    const subscript = /\[(.*)\]$/s.exec(name);
    if (subscript !== undefined && subscript !== null) arithmetic(subscript[1], text);
  }
}

/**
 * `let` and `declare -i` (and its kin): their words are arithmetic, and a variable declared integer evaluates every
 * value assigned to it later.
 */
export function noteEvaluatingCommand(
  twice: EvaluatedTwice,
  words: readonly (string | undefined)[],
  names: readonly (string | undefined)[],
  at: number,
  place: TwicePlace,
): void {
  const [program, ...args] = words;
  if (program === "let") {
    for (const word of args) twice.arithmetic(word, at, place.always, place.scope, `let ${word ?? "…"}`);
    return;
  }
  const arithmetic = (text: string | undefined, what: string) =>
    twice.arithmetic(text, at, place.always, place.scope, what);
  if (program === "test" || program === "[" || program === "unset") {
    // `test -v NAME` and `unset NAME` read a subscript in NAME as arithmetic.
    for (const [index, word] of args.entries()) {
      if (program !== "unset" && args[index - 1] !== "-v") continue;
      const subscript = word === undefined ? undefined : /\[(.*)\]$/s.exec(word)?.[1];
      if (word === undefined || subscript !== undefined) arithmetic(subscript, `${program} ${word ?? "…"}`);
    }
    return;
  }
  if (program === undefined || !DECLARING_BUILTINS.has(program)) return;
  if (args.some((word) => word !== undefined && /^-\w*A/.test(word)))
    for (const [index, word] of args.entries()) {
      const name = names[index + 1] ?? word;
      if (name !== undefined && !name.startsWith("-")) twice.associate(name);
    }
  if (!args.some((word) => word !== undefined && /^-\w*i/.test(word))) return;
  for (const [index, word] of args.entries()) {
    const name = names[index + 1];
    if (name !== undefined) {
      twice.integer(name);
      const value = word?.slice(word.indexOf("=") + 1);
      twice.arithmetic(value, at, place.always, place.scope, `${program} -i ${word ?? name}`);
    } else if (word !== undefined && isName(word)) twice.integer(word);
  }
}
