import type { Words } from "./unwrapped.ts";

/** How a wrapper's options are written: which take a value, which are flags, which change what it runs. */
export interface OptionSpec {
  /** Options taking a value (`-n`, `--adjustment`); a long one may also be written `--adjustment=5`. */
  values?: string[];
  /** Options taking none; short ones may be clustered (`-fv`). */
  flags?: string[];
  /** Short options whose value may only be attached (`-i{}`, `-l5`), or absent. */
  attached?: string[];
  /** Options after which the wrapper runs no command (`-p PID`, `-v`). */
  noCommand?: string[];
  /** Options whose value is a file the wrapper writes. */
  writes?: string[];
  /** Options whose value is shell text it runs. */
  scripts?: string[];
  /** Options that make the call unresolved, with why. */
  refuse?: Record<string, string>;
  /** Positional words before the command (timeout's duration, chrt's priority, flock's file). */
  positional?: number;
  /** Every long option is a flag (values only as `--x=y`), as valgrind's are. */
  longFlags?: boolean;
  /** An option word that is a bare number is a flag (`nice -10`). */
  numberFlags?: boolean;
}

/** A wrapper's options read: the words after them, each option's values, and why it cannot be read. */
export interface Parsed {
  rest: Words;
  values: Map<string, (string | undefined)[]>;
  noCommand: boolean;
  why?: string;
}

/** Reads the options of a wrapper, up to its positional words and command. */
export function parseOptions(name: string, args: Words, spec: OptionSpec): Parsed {
  const values = new Map<string, (string | undefined)[]>();
  const add = (option: string, value: string | undefined) =>
    values.set(option, [...(values.get(option) ?? []), value]);
  let noCommand = false;
  const unknown = (option: string): Parsed => ({
    rest: [],
    values,
    noCommand,
    why: `it is given ${option}, an option of ${name} the gate does not know, so which command it runs cannot be told`,
  });
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index];
    if (word === undefined)
      return { rest: [], values, noCommand, why: `an option of ${name} is only known when it runs` };
    if (word === "--") {
      index++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    if (spec.numberFlags === true && /^-\d+$/.test(word)) continue;
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const option = equals === -1 ? word : word.slice(0, equals);
      if (spec.refuse?.[option] !== undefined)
        return { rest: [], values, noCommand, why: spec.refuse[option] };
      if (spec.noCommand?.includes(option)) noCommand = true;
      if (spec.values?.includes(option) || spec.writes?.includes(option) || spec.scripts?.includes(option)) {
        add(option, equals === -1 ? args[++index] : word.slice(equals + 1));
        continue;
      }
      if (spec.flags?.includes(option) || spec.longFlags === true || spec.noCommand?.includes(option))
        continue;
      return unknown(option);
    }
    // A cluster of short options: `-fv`, `-n10`, `-oL`.
    for (let at = 1; at < word.length; at++) {
      const option = `-${word[at]}`;
      if (spec.refuse?.[option] !== undefined)
        return { rest: [], values, noCommand, why: spec.refuse[option] };
      if (spec.noCommand?.includes(option)) noCommand = true;
      if (spec.attached?.includes(option)) {
        add(option, word.slice(at + 1));
        break;
      }
      if (spec.values?.includes(option) || spec.writes?.includes(option) || spec.scripts?.includes(option)) {
        add(option, at + 1 < word.length ? word.slice(at + 1) : args[++index]);
        break;
      }
      if (spec.flags?.includes(option) || spec.noCommand?.includes(option)) continue;
      return unknown(option);
    }
  }
  return { rest: args.slice(index), values, noCommand };
}

/** The values of the options that write a file, or that run shell text. */
export const valuesOf = (parsed: Parsed, spec: OptionSpec, key: "writes" | "scripts") =>
  (spec[key] ?? []).flatMap((option) => parsed.values.get(option) ?? []);
