import {
  ASSIGNING_OPTIONS,
  DECLARING_BUILTINS,
  isCodeVariable,
  isStartupVariable,
  NAMING_OPTION,
} from "./bash-tables.ts";
import type { EvaluatedTwice } from "./evaluated-twice.ts";
import type { Found } from "./shell-walk.ts";
import { clip } from "./shell-words.ts";

// The variables a command sets other than by a plain assignment: the builtins that assign the variables they name
// (`read`, `mapfile`, `printf -v`, `getopts`, `let`, `declare` and its kin), `unset`, and what the walk meets
// (`for`, `coproc NAME`, `${x:=…}`, `{fd}>`). One that makes bash run code, or one whose name is only known when the
// command runs, leaves what later commands run unknown.

/** Where an assignment is recorded: the command's findings and the script's text evaluated twice. */
export interface Assigning {
  readonly found: Found;
  readonly twice: EvaluatedTwice;
}

/**
 * A variable set by name (`described` says how, for the message): a code variable is unresolved, a start-up one
 * (HOME) is noted for the shells the command starts.
 */
export function setsVariable(found: Found, name: string, described: string): void {
  if (isCodeVariable(name))
    found.unresolved.push(
      `${described} sets ${name}, which makes bash or the programs it starts run code the command does not show`,
    );
  if (isStartupVariable(name)) found.startup.changed.push(`${described} sets ${name}`);
}

/**
 * A variable the command sets other than by a plain assignment (which the walk checks). `value` is what it is set to
 * when known (`local i` sets i to nothing); recorded unless `recorded` is false (`select` sets what the user picks).
 */
export function assigns(
  at: Assigning,
  name: string | undefined,
  described: () => string,
  recorded = true,
  value: string | undefined = undefined,
): void {
  if (name !== undefined && recorded) at.twice.assign(name, value, 0, false, undefined);
  if (name === undefined)
    at.found.unresolved.push(
      `${described()} sets a variable whose name is only known when it runs, which may be one that makes bash run code`,
    );
  else setsVariable(at.found, name.replace(/(\+?=|\[).*$/s, ""), described());
}

/** The builtins read by name below, beside the tables' (ASSIGNING_OPTIONS, DECLARING_BUILTINS). */
const ASSIGNING = new Set(["printf", "getopts", "let", "unset"]);

/** The variables a builtin assigns: `read`, `mapfile`, `printf -v`, `getopts`, `let`, `unset`, `declare` and kin. */
export function assignedBy(
  at: Assigning,
  program: string,
  words: readonly (string | undefined)[],
  names: readonly (string | undefined)[],
  text: string,
): void {
  // Most commands assign nothing: nothing is made for them.
  if (!ASSIGNING.has(program) && ASSIGNING_OPTIONS[program] === undefined && !DECLARING_BUILTINS.has(program))
    return;
  const how = () => `\`${clip(text)}\``;
  const args = words.slice(1);
  if (program === "printf") {
    const first = args[0];
    if (first === undefined)
      at.found.unresolved.push(
        `${how()}: the first word of printf is only known when it runs, and as \`-v NAME\` it sets a variable, which may be one that makes bash run code`,
      );
    else if (first === "-v") assigns(at, args[1], how);
    else if (first.startsWith("-v")) assigns(at, first.slice(2), how);
  } else if (program === "getopts") {
    if (args.length >= 2) assigns(at, args[1], how);
  } else if (program === "let") {
    for (const word of args) if (word !== undefined) arithmetic(at, word);
  } else if (program === "unset") {
    // Unset, a variable has no value the script gave it: in a function, one of an outer scope may show through.
    const [options, operands] = splitOptions(args);
    if (!options.includes("f")) for (const operand of operands) assigns(at, operand, how);
  } else if (ASSIGNING_OPTIONS[program] !== undefined) assignedByReading(at, program, args, how);
  else if (DECLARING_BUILTINS.has(program)) declared(at, program, args, names, how);
}

/** `read`, `mapfile`/`readarray` and `wait -p`: the variables named by their operands (and `-a`/`-p` values). */
function assignedByReading(
  at: Assigning,
  program: string,
  args: readonly (string | undefined)[],
  how: () => string,
): void {
  const valued = ASSIGNING_OPTIONS[program] ?? "";
  const operands: (string | undefined)[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === undefined || operands.length > 0 || word === "--" || !/^-./.test(word)) {
      operands.push(...(word === "--" ? [] : [word]));
      continue;
    }
    for (let letter = 1; letter < word.length; letter++) {
      if (!valued.includes(word[letter] ?? "")) continue;
      const value = letter + 1 < word.length ? word.slice(letter + 1) : args[++index];
      if (word[letter] === NAMING_OPTION[program]) assigns(at, value, how);
      break;
    }
  }
  // read assigns every operand, mapfile its first; wait's operands are processes.
  const named = program === "read" ? operands : program === "wait" ? [] : operands.slice(0, 1);
  for (const operand of named) assigns(at, operand, how);
}

/**
 * `declare` and its kin: a quoted or computed assignment, and a bare name. In a function, `local i` (and `declare
 * i`) makes i a new variable with no value (counted as nothing, never as the one that sets it first); `-I` and `-g`
 * keep the value it had, and `-r` outside a function keeps it too, with later assignments failing.
 */
function declared(
  at: Assigning,
  program: string,
  args: readonly (string | undefined)[],
  names: readonly (string | undefined)[],
  how: () => string,
): void {
  const options = args.filter((word) => word !== undefined && /^[-+]/.test(word)).join("");
  const empties = program === "local" || program === "declare" || program === "typeset";
  for (const [index, word] of args.entries()) {
    if (names[index + 1] !== undefined) continue;
    if (word !== undefined && /^[-+]/.test(word)) {
      if (/^[-+]\w*n/.test(word))
        at.found.unresolved.push(
          `${how()} makes a name refer to another variable, which later assignments then set`,
        );
      continue;
    }
    const bare = word !== undefined && /^[A-Za-z_]\w*$/.test(word);
    assigns(at, word, how, true, bare && empties && !/[gIr]/.test(options) ? "" : undefined);
  }
}

/**
 * True when a declaring builtin only sets variables it names in its words (`local i=0`, `export FOO=$(ls)`): as
 * harmless as the plain assignments it stands for, so no allow rule needs to cover it.
 */
export function onlyDeclares(
  program: string,
  words: readonly (string | undefined)[],
  names: readonly (string | undefined)[],
): boolean {
  return (
    DECLARING_BUILTINS.has(program) &&
    words.slice(1).every((word, index) => names[index + 1] !== undefined || word !== undefined)
  );
}

/** Arithmetic text, which can assign any variable it names (`let PATH=1`, `((PS4=…))`). */
export function arithmetic(at: Assigning, text: string): void {
  for (const [identifier] of text.matchAll(/[A-Za-z_]\w*/g))
    if (isCodeVariable(identifier) || isStartupVariable(identifier))
      assigns(at, identifier, () => `the arithmetic \`${clip(text)}\``);
}

/** A builtin's option letters (up to `--` or the first operand) and its operands. */
export function splitOptions(args: readonly (string | undefined)[]): [string, (string | undefined)[]] {
  let options = "";
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index];
    if (word === "--") {
      index++;
      break;
    }
    if (word === undefined || !/^-./.test(word)) break;
    options += word.slice(1);
  }
  return [options, args.slice(index)];
}
