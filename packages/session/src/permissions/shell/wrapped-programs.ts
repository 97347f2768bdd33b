import { none, type Unwrapped, unresolved, type Words } from "./unwrapped.ts";
import { type OptionSpec, parseOptions, valuesOf } from "./wrapper-options.ts";
import { ENV, FLOCK, SCRIPT, WATCH, XARGS } from "./wrapper-usage.ts";

// The programs whose words say what they run in a way of their own: shells (`-c text`, a script file, their
// input), `trap`, `xargs`, `find -exec`, `env`, `watch`, `flock`, `su`/`runuser`, `script` and `tee`.

/** `bash -c text`, `bash file`, `bash` reading its input; options may cluster (`-ec`) and `-o`/`-O` take a value. */
export function unwrapShell(program: string, args: Words): Unwrapped {
  let command = false;
  let fromInput = false;
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index];
    if (word === undefined) return unresolved(`an option of ${program} is only known when it runs`);
    if (word === "--" || word === "-") {
      index++;
      break;
    }
    if (word.startsWith("--")) {
      if (["--rcfile", "--init-file"].includes(word)) index++;
      else if (word === "--pretty-print" || word === "--dump-strings" || word === "--dump-po-strings")
        return none;
      else if (word === "--emulate") index++;
      continue;
    }
    if (!word.startsWith("-") && !word.startsWith("+")) break;
    for (const flag of word.slice(1)) {
      if (flag === "c") command = true;
      else if (flag === "s") fromInput = true;
      else if (flag === "o" || flag === "O") index++;
    }
  }
  const first = args[index];
  if (command) {
    if (index >= args.length) return unresolved(`\`${program} -c\` is given no command`);
    return first === undefined
      ? unresolved(`\`${program} -c\` runs text that is only known when it runs`)
      : { kind: "script", text: first, writes: [], transparent: true };
  }
  // Reading its input: the text is checked when it is written in the command (a here-document), so the shell
  // itself need not be allowed; otherwise the call is unresolved.
  if (fromInput || index >= args.length) return { kind: "script", writes: [], transparent: true };
  if (first === undefined) return unresolved(`${program} runs a script named only when it runs`);
  return { kind: "script", file: first, writes: [], transparent: false };
}

/** `trap action signal…`: the action is shell text run later (`-`, `''` and options run nothing). */
export function unwrapTrap(args: Words): Unwrapped {
  const rest = args[0] === "--" ? args.slice(1) : args;
  const action = rest[0];
  if (rest.length < 2) return none;
  if (action === undefined) return unresolved("`trap` runs text that is only known when it runs");
  if (action.startsWith("-") && action !== "-") return none;
  if (action === "-" || action === "") return none;
  // The action is read as the script it is: `trap 'ls' EXIT` needs no rule beyond `ls`'s.
  return { kind: "script", text: action, writes: [], transparent: true };
}

/** `xargs cmd…` runs cmd with words from its input (`echo` when none is given); `-I` marks words only known then. */
export function unwrapXargs(args: Words): Unwrapped {
  const parsed = parseOptions("xargs", args, XARGS);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand) return none;
  // `-i` and `--replace` without a value replace `{}`.
  const replace = [
    ...(parsed.values.get("-I") ?? []),
    ...(parsed.values.get("-i") ?? []).map((value) => (value === "" ? "{}" : value)),
  ];
  if (replace.includes(undefined))
    return unresolved("the text `xargs -I` replaces is only known when it runs");
  const words: Words =
    parsed.rest.length === 0
      ? ["echo"]
      : parsed.rest.map((word) =>
          word !== undefined &&
          replace.some((marker) => marker !== undefined && marker !== "" && word.includes(marker))
            ? undefined
            : word,
        );
  return { kind: "command", words, more: true, assignments: [], writes: [], transparent: true };
}

/** `find … -exec cmd {} ;` (and `-execdir`, `-ok`): the commands it runs, and the files `-fprint` writes. */
export function unwrapFind(args: Words): Unwrapped {
  const commands: { words: Words; more: boolean }[] = [];
  const writes: (string | undefined)[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === "-fprint" || word === "-fprint0" || word === "-fls" || word === "-fprintf")
      writes.push(args[++index]);
    if (word !== "-exec" && word !== "-execdir" && word !== "-ok" && word !== "-okdir") continue;
    const words: (string | undefined)[] = [];
    let end = index + 1;
    for (; end < args.length && args[end] !== ";" && args[end] !== "+"; end++) {
      const part = args[end];
      words.push(part === undefined || part.includes("{}") ? undefined : part);
    }
    commands.push({ words, more: args[end] === "+" });
    index = end;
  }
  return commands.length === 0 && writes.length === 0
    ? none
    : { kind: "commands", commands, writes, transparent: false };
}

/** `env [NAME=value…] cmd`: the command, and the variables set for it (`-S` splits simple text only). */
export function unwrapEnv(args: Words, more: boolean): Unwrapped {
  const parsed = parseOptions("env", args, ENV);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand) return none;
  // A `-` after the options is `-i`.
  const rest = parsed.rest[0] === "-" ? parsed.rest.slice(1) : parsed.rest;
  const assignments: string[] = [];
  let index = 0;
  for (; index < rest.length; index++) {
    const word = rest[index];
    if (word === undefined) return unresolved("a word of `env` is only known when it runs");
    const equals = word.indexOf("=");
    if (equals <= 0) break;
    assignments.push(word.slice(0, equals));
  }
  const words = rest.slice(index);
  if (words.length === 0)
    return assignments.length === 0
      ? none
      : { kind: "command", words: [], more: false, assignments, writes: [], transparent: true };
  return { kind: "command", words, more, assignments, writes: [], transparent: true };
}

/** `watch cmd…` runs its words joined as shell text, or as a command with `-x`. */
export function unwrapWatch(args: Words): Unwrapped {
  const parsed = parseOptions("watch", args, WATCH);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand || parsed.rest.length === 0) return none;
  if (parsed.values.has("-x"))
    return {
      kind: "command",
      words: parsed.rest,
      more: false,
      assignments: [],
      writes: [],
      transparent: true,
    };
  // Without -x, watch joins its arguments and runs them with `sh -c`.
  return parsed.rest.includes(undefined)
    ? unresolved("`watch` runs text that is only known when it runs")
    : { kind: "script", text: parsed.rest.join(" "), writes: [], transparent: true };
}

/** `flock file cmd…` or `flock file -c text`. */
export function unwrapFlock(args: Words, more: boolean): Unwrapped {
  const parsed = parseOptions("flock", args, FLOCK);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand) return none;
  const rest = parsed.rest.slice(1);
  // `flock file -c text` (exactly these words) runs the text with the shell; `-c` is no option before the file.
  if (rest[0] === "-c" || rest[0] === "--command") {
    if (rest.length !== 2) return none;
    return rest[1] === undefined
      ? unresolved("`flock -c` runs text that is only known when it runs")
      : { kind: "script", text: rest[1], writes: [], transparent: true };
  }
  return rest.length === 0
    ? none
    : { kind: "command", words: rest, more, assignments: [], writes: [], transparent: true };
}

/** `su -c text` and `runuser -u user cmd…`; without a command they start a shell that reads its input. */
export function unwrapSu(program: string, args: Words): Unwrapped {
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === undefined) return unresolved(`an argument of ${program} is only known when it runs`);
    // `runuser -u user [--] command …` runs the command itself, without a shell.
    if (program === "runuser" && (word === "-u" || word === "--user")) {
      const rest = args.slice(index + 2);
      const words = rest[0] === "--" ? rest.slice(1) : rest;
      return words.length === 0
        ? unresolved("`runuser -u` without a command starts a shell that reads its input")
        : { kind: "command", words, more: false, assignments: [], writes: [], transparent: false };
    }
    const inline = /^--(command|session-command)=(.*)$/s.exec(word);
    if (inline !== null) return { kind: "script", text: inline[2] ?? "", writes: [], transparent: false };
    if (word === "-c" || word === "--command" || word === "--session-command") {
      const text = args[index + 1];
      return text === undefined
        ? unresolved(`\`${program} -c\` runs text that is only known when it runs`)
        : { kind: "script", text, writes: [], transparent: false };
    }
  }
  return unresolved(`\`${program}\` without -c starts a shell that reads its input`);
}

/** `script -c text [file]`: the text it runs and the log files it writes. */
export function unwrapScript(args: Words): Unwrapped {
  const parsed = parseOptions("script", args, SCRIPT);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand) return none;
  const text = valuesOf(parsed, SCRIPT, "script")[0];
  // `-t` alone writes its timing to standard error.
  const writes = [
    ...valuesOf(parsed, SCRIPT, "writes").filter((file) => file !== ""),
    parsed.rest.length === 0 ? "typescript" : parsed.rest[0],
  ];
  if (!parsed.values.has("-c")) return unresolved("`script` without -c starts a shell that reads its input");
  return text === undefined
    ? unresolved("`script -c` runs text that is only known when it runs")
    : { kind: "script", text, writes, transparent: true };
}

/** tee (GNU coreutils 9.1). */
const TEE: OptionSpec = {
  options: [
    ["-a --append", "none"],
    ["-i --ignore-interrupts", "none"],
    ["-p", "none"],
    ["--output-error", "optional"],
    ["--help", "none", "noCommand"],
    ["--version", "none", "noCommand"],
  ],
};

/** `tee file…` writes its files. */
export function unwrapTee(args: Words): Unwrapped {
  const parsed = parseOptions("tee", args, TEE);
  if (parsed.why !== undefined) return { kind: "writes", targets: [undefined], transparent: false };
  return parsed.rest.length === 0 ? none : { kind: "writes", targets: [...parsed.rest], transparent: false };
}
