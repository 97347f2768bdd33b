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

/** The tokens of arithmetic text: `${…}`, `$name`, `$((`, `$(`, a backquote, `$x`, a bare name, a number. */
const ARITHMETIC_TOKENS = /\$\{([^}]*)\}|\$([A-Za-z_]\w*)|\$\(\(|\$\(|`|\$([^\s])|([A-Za-z_]\w*)|\d[\w#@]*/g;
/** After a name: an assignment (`=`, not `==`), or any operator that changes it. Read at a position (sticky). */
const ASSIGNED_NEXT = /\s*=(?!=)/y;
const CHANGED_NEXT = /\s*(\+\+|--|[-+*/%&|^]?=(?!=)|<<=|>>=)/y;
/** Where an assigned value ends: the next `,` or `;` (searched from a position). */
const VALUE_END = /[,;]/g;

const stickyAt = (pattern: RegExp, text: string, at: number): boolean => {
  pattern.lastIndex = at;
  return pattern.test(text);
};

/** The index of the last character before `at` that is not white space (as `trimEnd` reads it), or -1. */
function lastNonSpace(text: string, at: number): number {
  let index = at - 1;
  while (index >= 0 && /\s/.test(text[index] ?? "")) index--;
  return index;
}

const isWordCode = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;

/**
 * Whether the value assigned to `name` at `end` (`name = value`, up to the next `,` or `;`) reads `name` itself:
 * the name as a whole word, as `\bname\b` finds it, after the value's first `=`.
 */
function readsName(text: string, end: number, name: string): boolean {
  VALUE_END.lastIndex = end;
  const value = text.slice(end, VALUE_END.exec(text)?.index ?? text.length);
  const assigned = value.slice(value.indexOf("=") + 1);
  for (let at = assigned.indexOf(name); at !== -1; at = assigned.indexOf(name, at + 1))
    if (!isWordCode(assigned.charCodeAt(at - 1)) && !isWordCode(assigned.charCodeAt(at + name.length)))
      return true;
  return false;
}

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
    for (const match of text.matchAll(ARITHMETIC_TOKENS)) {
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
        // What stands before and after the name, read in place (no copies of the text around each name).
        const last = lastNonSpace(text, match.index ?? 0);
        const previous = last === -1 ? "" : text.slice(Math.max(0, last - 1), last + 1);
        // `i=…` first in the text (or after `,`, `;`, `(`) sets i before anything reads it, unless it reads i.
        const first = stickyAt(ASSIGNED_NEXT, text, end) && (last === -1 || ",;(".includes(text[last] ?? ""));
        if (first && !local.has(bare) && !readsName(text, end, bare)) {
          local.add(bare);
          this.assign(bare, "0", at, always, scope);
          continue;
        }
        if (!local.has(bare)) this.read(bare, "number", at, what);
        if (stickyAt(CHANGED_NEXT, text, end) || previous === "++" || previous === "--")
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
    // Each variable's assignments, gathered once: a reading looks up its own, not every assignment of the script.
    const byName = new Map<string, Assigned[]>();
    for (const assignment of this.assigned) {
      const same = byName.get(assignment.name);
      if (same === undefined) byName.set(assignment.name, [assignment]);
      else same.push(assignment);
    }
    // Whether every assignment of a variable fits a reading, judged once per variable and reading.
    const fitting = new Map<string, boolean>();
    const allFit = (read: Read, all: readonly Assigned[]) => {
      const key = `${read.reading} ${read.name}`;
      let fit = fitting.get(key);
      if (fit === undefined) {
        fit = all.every(
          (assignment) => assignment.value !== undefined && fits[read.reading](assignment.value),
        );
        fitting.set(key, fit);
      }
      return fit;
    };
    for (const read of this.reads) {
      const all = byName.get(read.name);
      if (read.reading === "number" && NUMERIC.has(read.name) && all === undefined) continue;
      if (all !== undefined && allFit(read, all) && setBefore(read, all)) continue;
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
}

/**
 * An assignment of the variable that always runs comes before the reading, where it lasts (with every assignment
 * fitting the reading, the variable's value is then known there).
 */
const setBefore = (read: Read, all: readonly Assigned[]): boolean =>
  all.some(
    (assignment) =>
      assignment.always &&
      assignment.at < read.at &&
      assignment.scope !== undefined &&
      read.at >= assignment.scope.from &&
      read.at < assignment.scope.to,
  );

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
  switch (node.type) {
    case "ArithmeticExpansion":
      twice.arithmetic(node.text, node.pos, place.always, place.scope, node.text);
      return;
    case "ArithmeticCommand":
      twice.arithmetic(node.body, node.pos, place.always, place.scope, `((${node.body}))`);
      return;
    case "ArithmeticFor": {
      const parts = [node.initialize, node.test, node.update].map((part) =>
        part === undefined ? "" : place.source.slice(part.pos, part.end),
      );
      twice.arithmetic(parts.join(";"), node.pos, place.always, place.scope, `for ((${parts.join("; ")}))`);
      return;
    }
    case "TestBinary":
      if (ARITHMETIC_TESTS.has(node.operator))
        for (const side of [node.left, node.right])
          twice.arithmetic(
            unquoted(side.text),
            node.pos,
            place.always,
            place.scope,
            `[[ ${clip(node.left.text)} ${node.operator} ${clip(node.right.text)} ]]`,
          );
      return;
    case "TestUnary":
      if (node.operator === "-v") variableName(twice, node.operand.text, node.pos, place);
      return;
    case "ParameterExpansion": {
      const { operation, index } = node;
      if (node.prefix === "!" && !/[@*]\]?\}$/.test(node.text) && isName(node.parameter))
        twice.read(node.parameter, "name", node.pos, node.text);
      if (index !== undefined && !/^[@*]$/.test(index.text))
        twice.subscript(node.parameter, unquoted(index.text), node.pos, place.always, place.scope, node.text);
      if (operation?.type === "Slice") {
        const { always, scope } = place;
        twice.arithmetic(unquoted(operation.offset.text), node.pos, always, scope, node.text);
        if (operation.length !== undefined)
          twice.arithmetic(unquoted(operation.length.text), node.pos, always, scope, node.text);
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
function variableName(twice: EvaluatedTwice, text: string, at: number, place: TwicePlace): void {
  const name = unquoted(text);
  const expanded = /^\$\{?([A-Za-z_]\w*)\}?$/.exec(name);
  if (expanded?.[1] !== undefined) twice.read(expanded[1], "name", at, text);
  else if (/[$`]/.test(name)) twice.arithmetic(undefined, at, place.always, place.scope, text);
  else {
    const subscript = /\[(.*)\]$/s.exec(name);
    if (subscript !== undefined && subscript !== null)
      twice.arithmetic(subscript[1], at, place.always, place.scope, text);
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
  const program = words[0];
  if (program === undefined) return;
  if (program !== "let" && program !== "test" && program !== "[" && program !== "unset")
    if (!DECLARING_BUILTINS.has(program)) return;
  const args = words.slice(1);
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
