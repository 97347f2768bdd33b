import type { Words } from "./unwrapped.ts";

/**
 * How many values an option takes, as getopt_long reads it: `none`; `required`, attached (`-n1`, `--max-args=1`)
 * or the next word (`-n 1`, `--max-args 1`); `optional`, only attached (`-i{}`, `--replace={}`): never the next word.
 */
export type Arity = "none" | "required" | "optional";

/** What an option does besides taking its value. */
export type Role =
  /** The wrapper runs no command (`taskset -p`, `sudo -l`, `--help`). */
  | "noCommand"
  /** Its value is a file the wrapper writes (`time -o file`). */
  | "writes"
  /** Its value is shell text the wrapper runs (`script -c text`). */
  | "script"
  /** Its value is split into words read again as options and command (`env -S 'text'`). */
  | "split"
  /** Without a command, the wrapper starts a shell that reads its input (`sudo -s`). */
  | "shell"
  /** The call cannot be read: why. */
  | { refuse: string };

/**
 * One option: its names (a short one, `-a`, and long ones, `--arg-file`, space-separated; a short and a long name
 * share a row only when they take the same values), its arity, and what it does besides.
 */
export type OptionRow = readonly [names: string, arity: Arity, role?: Role];

/** How a program's options are written: one row per option, and the reading rules its parser follows. */
export interface OptionSpec {
  options: readonly OptionRow[];
  /** Options may follow operands (getopt without `+`): `script file -c text`. */
  permute?: boolean;
  /** A word `-N`, `--N` or `-+N` is a number given as a flag (`nice -10`). */
  numberFlags?: boolean;
  /** A long option not listed is a flag taking its value only after `=`, as valgrind's are. */
  longFlags?: boolean;
}

interface Entry {
  /** The option's first name: the key of its values. */
  key: string;
  arity: Arity;
  role?: Role;
}
interface Compiled {
  short: Map<string, Entry>;
  long: Map<string, Entry>;
}

const compiled = new WeakMap<OptionSpec, Compiled>();

/** The spec's rows by name, built once per spec. */
function compile(spec: OptionSpec): Compiled {
  const known = compiled.get(spec);
  if (known !== undefined) return known;
  const table: Compiled = { short: new Map(), long: new Map() };
  for (const [names, arity, role] of spec.options) {
    const all = names.split(" ");
    const entry: Entry = { key: all[0] ?? names, arity, ...(role === undefined ? {} : { role }) };
    for (const name of all) {
      if (name.startsWith("--")) table.long.set(name.slice(2), entry);
      else table.short.set(name.slice(1), entry);
    }
  }
  compiled.set(spec, table);
  return table;
}

/** A long option by its name or an unambiguous prefix of it, as getopt_long finds it. */
function longOption(table: Compiled, name: string): Entry | "ambiguous" | undefined {
  const exact = table.long.get(name);
  if (exact !== undefined) return exact;
  const found = new Set<Entry>();
  for (const [long, entry] of table.long) if (long.startsWith(name)) found.add(entry);
  if (found.size > 1) return "ambiguous";
  return found.values().next().value;
}

/** A wrapper's options read: the words after them, each option's values by its key, and why it cannot be read. */
export interface Parsed {
  rest: Words;
  values: Map<string, (string | undefined)[]>;
  noCommand: boolean;
  /** An option that makes it start a shell reading its input when no command is given. */
  shell: boolean;
  why?: string;
}

/** Text `env -S` splits as bash would split it: no quotes, escapes, variables or comments. */
const SPLIT_PLAIN = /^[^'"\\$#]*$/;

/** Reads the options of a wrapper, up to its positional words and command (getopt_long's rules). */
export function parseOptions(name: string, given: Words, spec: OptionSpec): Parsed {
  const table = compile(spec);
  const args = [...given];
  const values = new Map<string, (string | undefined)[]>();
  const operands: (string | undefined)[] = [];
  const parsed: Parsed = { rest: [], values, noCommand: false, shell: false };
  const fail = (why: string): Parsed => ({ ...parsed, rest: [], why });
  const unknown = (option: string) =>
    fail(
      `it is given ${option}, an option of ${name} the gate does not know, so which command it runs cannot be told`,
    );
  // Takes an option with its value; answers why the call cannot be read, if it cannot.
  const take = (entry: Entry, value: string | undefined, at: number): string | undefined => {
    const { role } = entry;
    if (typeof role === "object") return role.refuse;
    if (role === "noCommand") parsed.noCommand = true;
    if (role === "shell") parsed.shell = true;
    values.set(entry.key, [...(values.get(entry.key) ?? []), value]);
    if (role !== "split") return undefined;
    if (value === undefined || !SPLIT_PLAIN.test(value))
      return `\`${name} ${entry.key}\` splits text the gate does not read`;
    args.splice(at + 1, 0, ...value.split(/[ \t\n\v\f\r]+/).filter((word) => word !== ""));
    return undefined;
  };
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index];
    if (word === undefined) return fail(`an option of ${name} is only known when it runs`);
    if (word === "--") {
      index++;
      break;
    }
    if (!word.startsWith("-") || word === "-") {
      if (spec.permute !== true) break;
      operands.push(word);
      continue;
    }
    if (spec.numberFlags === true && /^-[-+]?\d/.test(word)) continue;
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const option = equals === -1 ? word.slice(2) : word.slice(2, equals);
      const attached = equals === -1 ? undefined : word.slice(equals + 1);
      const entry = longOption(table, option);
      if (entry === "ambiguous")
        return fail(`--${option} is ambiguous among the options of ${name}, which refuses it`);
      if (entry === undefined) {
        if (spec.longFlags === true) continue;
        return unknown(`--${option}`);
      }
      if (entry.arity === "none" && attached !== undefined)
        return fail(`--${option} of ${name} takes no value, and ${name} refuses it`);
      const value =
        entry.arity === "required" && attached === undefined
          ? args[++index]
          : entry.arity === "none"
            ? undefined
            : (attached ?? "");
      const why = take(entry, value, index);
      if (why !== undefined) return fail(why);
      continue;
    }
    // A cluster of short options: `-0rn1`; one that takes a value takes the rest of the word.
    for (let at = 1; at < word.length; at++) {
      const letter = word[at] ?? "";
      const entry = table.short.get(letter);
      if (entry === undefined) return unknown(`-${letter}`);
      if (entry.arity === "none") {
        const why = take(entry, undefined, index);
        if (why !== undefined) return fail(why);
        continue;
      }
      const attached = word.slice(at + 1);
      const value = entry.arity === "required" && attached === "" ? args[++index] : attached;
      const why = take(entry, value, index);
      if (why !== undefined) return fail(why);
      break;
    }
  }
  return { ...parsed, rest: [...operands, ...args.slice(index)] };
}

/** The values of the options of one role (the files they write, the text they run). */
export const valuesOf = (parsed: Parsed, spec: OptionSpec, role: "writes" | "script") =>
  spec.options
    .filter((row) => row[2] === role)
    .flatMap(([names]) => parsed.values.get(names.split(" ")[0] ?? names) ?? []);

/** Rows of one arity for each name given, for tables kept as lists of names. */
export const each = (arity: Arity, ...names: string[]): OptionRow[] => names.map((name) => [name, arity]);
