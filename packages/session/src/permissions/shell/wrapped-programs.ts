import { none, type Unwrapped, unresolved, type Words } from "./unwrapped.ts";
import { type OptionSpec, parseOptions, valuesOf } from "./wrapper-options.ts";

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
  const spec: OptionSpec = {
    flags: [
      ...["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p", "--interactive"],
      ...["-x", "--exit", "-o", "--open-tty", "--show-limits"],
    ],
    values: [
      ...["-a", "--arg-file", "-d", "--delimiter", "-E", "-L", "--max-lines", "-n", "--max-args"],
      ...["-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "-I", "--replace", "--eof"],
    ],
    attached: ["-e", "-i", "-l"],
  };
  const parsed = parseOptions("xargs", args, spec);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  const replace = [...(parsed.values.get("-I") ?? []), ...(parsed.values.get("--replace") ?? [])].concat(
    (parsed.values.get("-i") ?? []).map((value) => (value === "" ? "{}" : value)),
  );
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
  const spec: OptionSpec = {
    flags: ["-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "--list-signal-handling"],
    values: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
    longFlags: true,
  };
  // `-` alone is `-i`.
  const parsed = parseOptions(
    "env",
    args.map((word) => (word === "-" ? "-i" : word)),
    spec,
  );
  if (parsed.why !== undefined) return unresolved(parsed.why);
  const assignments: string[] = [];
  let index = 0;
  for (; index < parsed.rest.length; index++) {
    const word = parsed.rest[index];
    if (word === undefined) return unresolved("a word of `env` is only known when it runs");
    const equals = word.indexOf("=");
    if (equals <= 0) break;
    assignments.push(word.slice(0, equals));
  }
  const split = [...(parsed.values.get("-S") ?? []), ...(parsed.values.get("--split-string") ?? [])];
  let words: Words = parsed.rest.slice(index);
  if (split.length > 0) {
    const text = split[0];
    if (text === undefined || /['"\\$]/.test(text))
      return unresolved("`env -S` splits text the gate does not read");
    words = [...text.split(/[ \t\n]+/).filter((word) => word !== ""), ...words];
  }
  if (words.length === 0)
    return assignments.length === 0
      ? none
      : { kind: "command", words: [], more: false, assignments, writes: [], transparent: true };
  return { kind: "command", words, more, assignments, writes: [], transparent: true };
}

/** `watch cmd…` runs its words joined as shell text, or as a command with `-x`. */
export function unwrapWatch(args: Words): Unwrapped {
  const spec: OptionSpec = {
    flags: [
      ...["-b", "-c", "-C", "-e", "-g", "-p", "-r", "-t", "-w", "-x", "-d"],
      ...["--beep", "--color", "--no-color", "--errexit", "--chgexit", "--precise", "--no-rerun"],
      ...["--no-title", "--no-wrap", "--exec", "--differences", "--no-linewrap"],
    ],
    values: ["-n", "--interval", "-q", "--equexit"],
  };
  const exec = args.some(
    (word) => word === "-x" || word === "--exec" || (word !== undefined && /^-[a-z]*x/.test(word)),
  );
  const parsed = parseOptions("watch", args, spec);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.rest.length === 0) return none;
  if (exec)
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
  const spec: OptionSpec = {
    flags: [
      ...["-s", "-x", "-e", "-n", "-u", "-o", "-F", "--shared", "--exclusive", "--nonblock", "--nb"],
      ...["--unlock", "--close", "--no-fork", "--verbose"],
    ],
    values: ["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"],
    scripts: ["-c", "--command"],
  };
  const parsed = parseOptions("flock", args, spec);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  let scripts = valuesOf(parsed, spec, "scripts");
  let rest = parsed.rest.slice(1);
  // `flock file -c text`: the command may follow the file.
  if (rest[0] === "-c" || rest[0] === "--command") {
    scripts = [...scripts, rest[1]];
    rest = [];
  }
  if (scripts.length > 0)
    return scripts[0] === undefined
      ? unresolved("`flock -c` runs text that is only known when it runs")
      : { kind: "script", text: scripts[0], writes: [], transparent: true };
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
  const spec: OptionSpec = {
    flags: ["-a", "--append", "-e", "--return", "-f", "--flush", "-q", "--quiet"],
    values: ["-E", "--echo", "-m", "--logging-format", "-o", "--output-limit", "-T", "-t", "--timing"],
    writes: ["-B", "--log-io", "-I", "--log-in", "-O", "--log-out"],
    scripts: ["-c", "--command"],
  };
  const parsed = parseOptions("script", args, spec);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  const text = valuesOf(parsed, spec, "scripts")[0];
  const writes = [
    ...valuesOf(parsed, spec, "writes"),
    parsed.rest.length === 0 ? "typescript" : parsed.rest[0],
  ];
  if (!parsed.values.has("-c") && !parsed.values.has("--command"))
    return unresolved("`script` without -c starts a shell that reads its input");
  return text === undefined
    ? unresolved("`script -c` runs text that is only known when it runs")
    : { kind: "script", text, writes, transparent: true };
}

/** `tee file…` writes its files. */
export function unwrapTee(args: Words): Unwrapped {
  const spec: OptionSpec = {
    flags: ["-a", "--append", "-i", "--ignore-interrupts", "-p", "--output-error"],
  };
  const parsed = parseOptions("tee", args, spec);
  if (parsed.why !== undefined) return { kind: "writes", targets: [undefined], transparent: false };
  return parsed.rest.length === 0 ? none : { kind: "writes", targets: [...parsed.rest], transparent: false };
}
