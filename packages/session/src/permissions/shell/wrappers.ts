/**
 * Commands that run another command, and where that command is in their words: the wrappers of wrapper-table.ts,
 * read by their options (wrapper-options.ts), and the programs read one by one (wrapped-programs.ts). Each
 * wrapper's options are listed with the ones that take a value, so that `nice -n 10 rm x` runs `rm x`, not `10`;
 * an option the list does not know makes the command unresolved rather than guessed.
 */

import { none, type Unwrapped, unresolved, type Words } from "./unwrapped.ts";
import {
  unwrapEnv,
  unwrapFind,
  unwrapFlock,
  unwrapScript,
  unwrapShell,
  unwrapSu,
  unwrapTee,
  unwrapTrap,
  unwrapWatch,
  unwrapXargs,
} from "./wrapped-programs.ts";
import { parseOptions, valuesOf } from "./wrapper-options.ts";
import { OTHER_SHELLS, RESERVED, SHELLS, WRAPPERS, type WrapperSpec } from "./wrapper-table.ts";

/** What `program` (a command's name, path removed) runs when called with `args`. */
export function unwrapCommand(program: string, args: Words, more: boolean): Unwrapped {
  const inner = unwrap(program, args, more);
  if (inner.kind === "command" && inner.words[0] !== undefined && RESERVED.has(inner.words[0]))
    return unresolved(
      `\`${program} ${inner.words[0]}\` runs a compound command the gate's parser reads apart`,
    );
  return inner;
}

/** What a program runs: a shell's text or script, a program read by name, a wrapper of the table, or nothing. */
function unwrap(program: string, args: Words, more: boolean): Unwrapped {
  if (SHELLS.has(program)) return unwrapShell(program, args);
  if (OTHER_SHELLS.has(program)) {
    const runs = args.some((word) => word === "-c" || word === "-Command" || word === "-command");
    return runs ? unresolved(`it runs text in ${program}, whose language the gate does not parse`) : none;
  }
  switch (program) {
    case "eval":
      return args.every((word) => word !== undefined)
        ? { kind: "script", text: args.join(" "), writes: [], transparent: true }
        : unresolved("`eval` runs text that is only known when it runs");
    case "source":
    case ".": {
      const file = args[0];
      if (file === undefined)
        return args.length === 0 ? none : unresolved("it runs a file named only when it runs");
      return { kind: "script", file, writes: [], transparent: false };
    }
    case "trap":
      return unwrapTrap(args);
    case "alias":
      return {
        kind: "scripts",
        texts: args
          .filter((word) => word === undefined || word.includes("="))
          .map((word) => (word === undefined ? undefined : word.slice(word.indexOf("=") + 1))),
        transparent: false,
      };
    case "coproc": {
      // `coproc cmd args` runs cmd; `coproc NAME { …; }` is read by the grammar as separate commands.
      const [first, second] = args;
      if (first === "{" || first === "(" || second === "{" || second === "(")
        return unresolved("a named `coproc` is not read by the gate");
      return args.length === 0
        ? none
        : { kind: "command", words: args, more, assignments: [], writes: [], transparent: true };
    }
    case "hash":
      return args.some((word) => word === undefined || /^-\w*p/.test(word))
        ? unresolved("`hash -p` makes a name run another program")
        : none;
    case "enable":
      return args.some((word) => word === undefined || /^-\w*f/.test(word))
        ? unresolved("`enable -f` loads a builtin from a file")
        : none;
    case "xargs":
      return unwrapXargs(args);
    case "find":
      return unwrapFind(args);
    case "env":
      return unwrapEnv(args, more);
    case "watch":
      return unwrapWatch(args);
    case "flock":
      return unwrapFlock(args, more);
    case "su":
    case "runuser":
      return unwrapSu(program, args);
    case "script":
      return unwrapScript(args);
    case "busybox":
    case "toybox": {
      const first = args[0];
      if (first === undefined)
        return args.length === 0 ? none : unresolved(`the ${program} applet is only known when it runs`);
      return first.startsWith("-")
        ? none
        : { kind: "command", words: args, more, assignments: [], writes: [], transparent: true };
    }
    case "tee":
      return unwrapTee(args);
  }
  const spec = WRAPPERS[program];
  return spec === undefined ? none : unwrapListed(program, spec, args, more);
}

/** A wrapper of the table: its options, then its positional words, then the command it runs. */
function unwrapListed(program: string, spec: WrapperSpec, args: Words, more: boolean): Unwrapped {
  const parsed = parseOptions(program, args, spec);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand) return none;
  const positional = spec.positional ?? 0;
  if (parsed.rest.slice(0, positional).includes(undefined))
    return unresolved(`an argument of ${program} is only known when it runs`);
  let words = parsed.rest.slice(positional);
  // `sudo NAME=value cmd` sets NAME for cmd.
  const assignments: string[] = [];
  while (spec.assignments === true && words.length > 0) {
    const word = words[0];
    if (word === undefined) return unresolved(`a word of ${program} is only known when it runs`);
    const equals = word.indexOf("=");
    if (equals <= 0) break;
    assignments.push(word.slice(0, equals));
    words = words.slice(1);
  }
  if (words.length === 0) {
    // `sudo -s` reads commands from its input; `chroot dir` starts an interactive shell.
    if (parsed.shell) return { kind: "script", writes: [], transparent: false };
    return program === "chroot" && parsed.rest.length > 0
      ? unresolved("`chroot` without a command starts a shell that reads its input")
      : none;
  }
  return {
    kind: "command",
    words,
    more,
    assignments,
    writes: valuesOf(parsed, spec, "writes"),
    transparent: spec.transparent,
  };
}
