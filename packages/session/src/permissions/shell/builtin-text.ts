import type { SyntaxNode, Word } from "unbash";
import type { Unbash } from "./shell-walk.ts";
import { plainArithmetic } from "./shell-words.ts";

// Builtins whose arguments bash runs as shell text or expands as the words of a command, as its manual lists them:
// `compgen`/`complete` (-C command, -F function, -W words), `mapfile`/`readarray -C` (a callback), `fc` (history
// entries, and the -e editor) and `bind` (-x commands, macros typed into the line, -f files). `trap`, `eval`,
// `source` and `enable -f` are read with the wrappers (wrappers.ts).

/** What a builtin runs: text the walk reads as a script, words it expands, functions it calls, and what is unknown. */
export interface RunsText {
  /** Shell text bash runs (with the words it appends, unknown here, as `"$@"`). */
  readonly scripts: string[];
  /** Text bash splits into words and expands (its substitutions run), with a substitution in it. */
  readonly words: string[];
  /** Functions it calls by name, each with why it is unresolved unless the command defines it. */
  readonly functions: [name: string, why: string][];
  readonly unresolved: string[];
}

/** Why `shopt -s extdebug` (and `bash -O extdebug`, `--debugger`) is unresolved. */
export const EXTDEBUG =
  "`extdebug` lets a DEBUG trap skip the command it runs before, so the gate cannot tell which assignments run";

/** The words bash appends to a command it builds (a completion's words, mapfile's index and line, fc's file). */
const APPENDED = ' "$@"';

/** A builtin's options as `internal_getopt` reads them: clustered, a value attached or in the next word. */
interface Options {
  /** Each option letter with its value (null: takes none; undefined: only known when the command runs). */
  readonly given: [letter: string, value: string | undefined | null][];
  readonly operands: (string | undefined)[];
  /** A word where an option may be is only known when the command runs: it may be any option. */
  readonly unknown: boolean;
}

function readOptions(args: readonly (string | undefined)[], valued: string): Options {
  const given: Options["given"] = [];
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index];
    if (word === undefined) return { given, operands: args.slice(index), unknown: true };
    if (word === "--") {
      index++;
      break;
    }
    if (!/^-./.test(word)) break;
    for (let at = 1; at < word.length; at++) {
      const letter = word[at] ?? "";
      if (!valued.includes(letter)) {
        given.push([letter, null]);
        continue;
      }
      given.push([letter, at + 1 < word.length ? word.slice(at + 1) : args[++index]]);
      break;
    }
  }
  return { given, operands: args.slice(index), unknown: false };
}

const values = (options: Options, letter: string) =>
  options.given.flatMap(([given, value]) => (given === letter ? [value] : []));

/** What `program` runs as text when called with `args`; undefined for a builtin that runs none. */
export function textRunBy(program: string, args: readonly (string | undefined)[]): RunsText | undefined {
  const reader = READERS.get(program);
  // Most commands are none of these: nothing is made for them.
  if (reader === undefined) return undefined;
  const [valued, read] = reader;
  const runs: RunsText = { scripts: [], words: [], functions: [], unresolved: [] };
  const options = readOptions(args, valued);
  if (options.unknown) runs.unresolved.push(`an option of \`${program}\` is only known when it runs`);
  read(program, options, runs);
  return runs;
}

/** What one builtin runs, from its options read. */
type Reader = (program: string, options: Options, runs: RunsText) => void;

/** `mapfile`/`readarray -C callback`: the callback runs with the index and line appended. */
function callbacks(program: string, options: Options, runs: RunsText): void {
  for (const callback of values(options, "C"))
    if (callback === undefined || callback === null)
      runs.unresolved.push(`\`${program} -C\` runs a callback only known when it runs`);
    else runs.scripts.push(callback + APPENDED);
}

/** `shopt -s extdebug`. */
function shopt(_program: string, { given, operands }: Options, runs: RunsText): void {
  if (
    given.some(([letter]) => letter === "s") &&
    operands.some((name) => name === undefined || name === "extdebug")
  )
    runs.unresolved.push(EXTDEBUG);
}

/** `compgen`/`complete`: -C text runs (with the words being completed), -F calls a function, -W words expand. */
function completion(program: string, options: Options, runs: RunsText): void {
  for (const command of values(options, "C"))
    if (command === undefined || command === null)
      runs.unresolved.push(`\`${program} -C\` runs a command only known when it runs`);
    else runs.scripts.push(command + APPENDED);
  for (const name of values(options, "F"))
    if (name === undefined || name === null)
      runs.unresolved.push(`\`${program} -F\` calls a function named only when it runs`);
    else
      runs.functions.push([
        name,
        `\`${program} -F ${name}\` calls the function ${name}, which the command does not define`,
      ]);
  for (const words of values(options, "W"))
    if (words === undefined || words === null)
      runs.unresolved.push(`\`${program} -W\` expands words only known when it runs`);
    else if (/[$`]|[<>]\(/.test(words)) runs.words.push(words);
}

/** `fc` re-runs history entries (after the -e editor, itself a command with a file appended), unless it lists. */
function history(_program: string, options: Options, runs: RunsText): void {
  const letters = options.given.map(([letter]) => letter);
  if (letters.includes("l") && !letters.includes("s")) return;
  runs.unresolved.push("`fc` runs commands from the shell's history, which the command does not show");
  for (const editor of values(options, "e"))
    if (editor !== undefined && editor !== null && editor !== "-") runs.scripts.push(editor + APPENDED);
}

/** A key sequence (quoted or not), a colon, and what it is bound to. */
const BINDING = /^\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^:\s]*)\s*:\s*(.*)$/s;

/** `bind`: `-x` binds a key to a command, a quoted right side is a macro typed into the line, `-f` reads a file. */
function bindings(_program: string, options: Options, runs: RunsText): void {
  for (const binding of values(options, "x")) {
    if (binding === undefined || binding === null) {
      runs.unresolved.push("`bind -x` binds a key to a command only known when it runs");
      continue;
    }
    const command = BINDING.exec(binding)?.[2];
    if (command === undefined) continue;
    runs.scripts.push(/^(["']).*\1$/s.test(command) ? command.slice(1, -1) : command);
  }
  if (values(options, "f").length > 0)
    runs.unresolved.push("`bind -f` reads key bindings from a file, which may bind keys to commands");
  for (const operand of options.operands)
    if (operand === undefined || /^["']/.test(BINDING.exec(operand)?.[2] ?? ""))
      runs.unresolved.push(
        "`bind` binds a key to text typed into an interactive shell, which the gate does not read",
      );
}

/** The builtins that run text, with the option letters that take a value (as `internal_getopt` reads them). */
const READERS = new Map<string, [valued: string, read: Reader]>([
  ["compgen", ["oAGWFCXPS", completion]],
  ["complete", ["oAGWFCXPS", completion]],
  ["mapfile", ["dnOsuCc", callbacks]],
  ["readarray", ["dnOsuCc", callbacks]],
  ["fc", ["e", history]],
  ["bind", ["mfqurx", bindings]],
  ["shopt", ["", shopt]],
]);

/** Builtins that run text in the shell itself, where it can unset the script's functions. */
const RUN_HERE = new Set([
  "eval",
  "trap",
  "alias",
  "compgen",
  "complete",
  "mapfile",
  "readarray",
  "fc",
  "bind",
]);

/** Command names after which a function may be unset. */
const MAY_UNSET = new Set(["unset", "builtin", "command"]);

/**
 * Every function name a script defines, at any depth (substitutions included), and every one it unsets (`unset -f
 * f`, or `unset f` when no variable f is set); `*` when a name it unsets is only known when it runs.
 */

export function definitions(
  unbash: Unbash,
  tree: SyntaxNode,
  defined: Set<string>,
  unset: Set<string>,
  decode: (word: Word) => string | undefined,
): void {
  // One callback for the whole tree, not a closure per node.
  const visit = (node: SyntaxNode): void => {
    noteDefinition(node, defined, unset, decode);
    if (!plainArithmetic(node)) unbash.forEachChild(node, visit);
  };
  visit(tree);
}

/** A function `node` defines, or the functions it may unset. */
function noteDefinition(
  node: SyntaxNode,
  defined: Set<string>,
  unset: Set<string>,
  decode: (word: Word) => string | undefined,
): void {
  if (node.type === "Function") defined.add(node.name.value);
  // Only `unset` (maybe behind `builtin`/`command`) and text run here can unset a function: other commands'
  // words need no decoding.
  const name = node.type === "Command" ? node.name : undefined;
  const first = name === undefined ? undefined : decode(name);
  if (
    node.type === "Command" &&
    name !== undefined &&
    first !== undefined &&
    (MAY_UNSET.has(first) || RUN_HERE.has(first))
  ) {
    const words = [name, ...node.args].map((word) => (word.type === "Assignment" ? undefined : decode(word)));
    while (words[0] === "builtin" || words[0] === "command") words.shift();
    if (words[0] === "unset") {
      const options = readOptions(words.slice(1), "");
      if (options.unknown) unset.add("*");
      if (!options.given.some(([letter]) => letter === "v"))
        for (const name of options.operands) unset.add(name ?? "*");
    } else if (
      RUN_HERE.has(words[0] ?? "") &&
      words.some((word) => word !== undefined && /\bunset\b/.test(word))
    )
      // Text run elsewhere (`eval 'unset -f f'`, a trap): any function may be unset.
      unset.add("*");
  }
}
