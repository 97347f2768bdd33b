/**
 * Commands that run another command, and where that command is in their words. Each wrapper's options are listed
 * with the ones that take a value, so that `nice -n 10 rm x` runs `rm x`, not `10`; an option the list does not
 * know makes the command unresolved rather than guessed.
 */

type Words = readonly (string | undefined)[];

/** What a command runs besides itself. */
export type Unwrapped =
  | { kind: "none" }
  | { kind: "unresolved"; why: string; transparent: false }
  | {
      kind: "command";
      words: Words;
      more: boolean;
      /** Variables set for it (`env NAME=value cmd`), by name. */
      assignments: string[];
      /** Files the wrapper itself writes (`time -o file`). */
      writes: (string | undefined)[];
      transparent: boolean;
    }
  | {
      kind: "script";
      /** Shell text it runs (`bash -c text`, `eval`, `watch`); undefined when it is only known at run time. */
      text?: string;
      /** A script file it runs (`bash file`, `source file`). */
      file?: string;
      writes: (string | undefined)[];
      transparent: boolean;
    }
  | { kind: "scripts"; texts: (string | undefined)[]; transparent: boolean }
  | {
      kind: "commands";
      commands: { words: Words; more: boolean }[];
      writes: (string | undefined)[];
      transparent: boolean;
    }
  | { kind: "writes"; targets: (string | undefined)[]; transparent: false };

interface OptionSpec {
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

interface Parsed {
  rest: Words;
  values: Map<string, (string | undefined)[]>;
  noCommand: boolean;
  why?: string;
}

/** Reads the options of a wrapper, up to its positional words and command. */
function parseOptions(name: string, args: Words, spec: OptionSpec): Parsed {
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

const valuesOf = (parsed: Parsed, spec: OptionSpec, key: "writes" | "scripts") =>
  (spec[key] ?? []).flatMap((option) => parsed.values.get(option) ?? []);

/** Wrappers that run their command with options first, then positional words, then the command. */
const WRAPPERS: Record<string, OptionSpec & { transparent: boolean }> = {
  command: { flags: ["-p"], noCommand: ["-v", "-V"], transparent: true },
  builtin: { transparent: true },
  exec: { flags: ["-c", "-l"], values: ["-a"], transparent: true },
  nohup: { transparent: true },
  noglob: { transparent: true },
  nocorrect: { transparent: true },
  catchsegv: { transparent: true },
  eatmydata: { transparent: true },
  nice: { values: ["-n", "--adjustment"], numberFlags: true, transparent: true },
  timeout: {
    values: ["-s", "--signal", "-k", "--kill-after"],
    flags: ["--preserve-status", "--foreground", "-v", "--verbose", "-f"],
    positional: 1,
    transparent: true,
  },
  time: {
    flags: ["-p", "-a", "--append", "-v", "--verbose", "-q", "--quiet", "--portability"],
    values: ["-f", "--format"],
    writes: ["-o", "--output"],
    transparent: true,
  },
  stdbuf: { values: ["-i", "-o", "-e", "--input", "--output", "--error"], transparent: true },
  ionice: {
    values: ["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    flags: ["-t", "--ignore"],
    noCommand: ["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    transparent: true,
  },
  chrt: {
    flags: [
      ...["-a", "-b", "-d", "-f", "-i", "-o", "-r", "-R", "-v", "-e"],
      ...["--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--reset-on-fork"],
      ...["--verbose", "--ext"],
    ],
    values: ["-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"],
    noCommand: ["-p", "--pid", "-m", "--max"],
    positional: 1,
    transparent: true,
  },
  setsid: { flags: ["-c", "-f", "-w", "--ctty", "--fork", "--wait"], transparent: true },
  taskset: {
    flags: ["-c", "--cpu-list", "-a", "--all-tasks"],
    noCommand: ["-p", "--pid"],
    positional: 1,
    transparent: true,
  },
  unbuffer: { flags: ["-p"], transparent: true },
  fakeroot: {
    values: ["-l", "--lib", "--faked", "-s", "-i", "-b"],
    flags: ["-u", "--unknown-is-real"],
    noCommand: ["-h", "-v", "--version", "--help"],
    transparent: true,
  },
  "dbus-run-session": { values: ["--config-file", "--dbus-daemon"], transparent: true },
  caffeinate: { flags: ["-d", "-i", "-m", "-s", "-u"], values: ["-t", "-w"], transparent: true },
  valgrind: { flags: ["-q", "-v"], longFlags: true, noCommand: ["-h"], transparent: true },
  strace: {
    flags: [
      ...[
        "-f",
        "-F",
        "-c",
        "-C",
        "-d",
        "-D",
        "-i",
        "-k",
        "-n",
        "-q",
        "-r",
        "-t",
        "-T",
        "-v",
        "-w",
        "-x",
        "-y",
        "-z",
        "-Z",
      ],
      "--follow-forks",
      "--summary-only",
    ],
    values: [
      "-e",
      "-s",
      "-u",
      "-E",
      "-a",
      "-b",
      "-I",
      "-O",
      "-P",
      "-S",
      "-X",
      "-U",
      "--trace",
      "--string-limit",
    ],
    writes: ["-o", "--output"],
    noCommand: ["-p", "--attach", "-h", "-V"],
    transparent: true,
  },
  ltrace: {
    flags: ["-b", "-c", "-C", "-f", "-i", "-L", "-r", "-S", "-t", "-T", "-w"],
    values: ["-e", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-n", "-x"],
    writes: ["-o", "--output"],
    noCommand: ["-p", "-h", "-V"],
    transparent: true,
  },
  sudo: {
    flags: ["-A", "-b", "-E", "-H", "-n", "-P", "-S", "-s", "-i", "--preserve-env", "--login", "--shell"],
    values: [
      ...["-C", "-D", "-g", "-h", "-p", "-R", "-r", "-t", "-T", "-U", "-u"],
      ...["--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type"],
      ...["--command-timeout", "--other-user", "--user"],
    ],
    noCommand: [
      "-l",
      "--list",
      "-v",
      "--validate",
      "-k",
      "--reset-timestamp",
      "-K",
      "--remove-timestamp",
      "-V",
    ],
    refuse: {
      "-e": "`sudo -e` edits files as another user",
      "--edit": "`sudo -e` edits files as another user",
    },
    transparent: false,
  },
  doas: {
    flags: ["-n", "-L"],
    values: ["-u"],
    noCommand: ["-C"],
    refuse: { "-s": "`doas -s` starts a shell that reads commands from its input" },
    transparent: false,
  },
  chroot: { flags: ["--skip-chdir"], values: ["--userspec", "--groups"], positional: 1, transparent: false },
};

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash", "ksh93", "rbash"]);
const OTHER_SHELLS = new Set(["fish", "csh", "tcsh", "pwsh", "powershell", "nu", "xonsh", "elvish"]);

/**
 * Builtins, lookups and file utilities that never run a word they are given as a command (no option of theirs
 * starts a program: not `tar`, `sort`, `sed`, `awk`, `less` or `git`).
 */
const NEVER_RUN_ARGUMENTS = new Set([
  ...["ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "stat", "basename", "dirname", "realpath"],
  ...["readlink", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "cp", "mv", "diff", "cmp", "du", "df"],
  "echo",
  "printf",
  "cd",
  "pwd",
  "test",
  "[",
  "true",
  "false",
  ":",
  "read",
  "exit",
  "return",
  "shift",
  "unset",
  "export",
  "declare",
  "local",
  "readonly",
  "typeset",
  "let",
  "type",
  "which",
  "help",
  "umask",
  "ulimit",
  "jobs",
  "wait",
  "dirs",
  "pushd",
  "popd",
  "shopt",
  "getopts",
  "times",
]);

/** The programs `unwrap` reads apart by name (beside the wrappers, the shells and the builtins that run nothing). */
const UNWRAPPED_PROGRAMS = new Set([
  ...["eval", "source", ".", "trap", "alias", "coproc", "xargs", "find", "env", "watch", "flock", "su"],
  ...["runuser", "script", "busybox", "toybox", "tee", "hash", "enable"],
]);

/** True when the gate knows what `program` runs (a wrapper listed here, a shell, or a builtin that runs nothing). */
export function knowsWhatItRuns(program: string): boolean {
  return (
    program in WRAPPERS ||
    SHELLS.has(program) ||
    NEVER_RUN_ARGUMENTS.has(program) ||
    UNWRAPPED_PROGRAMS.has(program)
  );
}

const none = { kind: "none" } as const;
const unresolved = (why: string): Unwrapped => ({ kind: "unresolved", why, transparent: false });

/** Words that start a compound command: after `time` or any wrapper, the grammar splits them apart. */
const RESERVED = new Set([
  "{",
  "}",
  "(",
  ")",
  "!",
  "[[",
  "((",
  "if",
  "for",
  "while",
  "until",
  "case",
  "select",
  "function",
  "coproc",
  "then",
  "do",
  "done",
  "fi",
  "esac",
]);

/** What `program` (a command's name, path removed) runs when called with `args`. */
export function unwrapCommand(program: string, args: Words, more: boolean): Unwrapped {
  const inner = unwrap(program, args, more);
  if (inner.kind === "command" && inner.words[0] !== undefined && RESERVED.has(inner.words[0]))
    return unresolved(
      `\`${program} ${inner.words[0]}\` runs a compound command the gate's parser reads apart`,
    );
  return inner;
}

function unwrap(program: string, args: Words, more: boolean): Unwrapped {
  if (SHELLS.has(program)) return shell(program, args);
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
      return trap(args);
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
      return xargs(args);
    case "find":
      return find(args);
    case "env":
      return env(args, more);
    case "watch":
      return watch(args);
    case "flock":
      return flock(args, more);
    case "su":
    case "runuser":
      return su(program, args);
    case "script":
      return scriptCommand(args);
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
      return tee(args);
  }
  const spec = WRAPPERS[program];
  if (spec === undefined) return none;
  const parsed = parseOptions(program, args, spec);
  if (parsed.why !== undefined) return unresolved(parsed.why);
  if (parsed.noCommand) return none;
  const positional = spec.positional ?? 0;
  const words = parsed.rest.slice(positional);
  if (parsed.rest.slice(0, positional).includes(undefined))
    return unresolved(`an argument of ${program} is only known when it runs`);
  if (words.length === 0) {
    // `chroot dir` starts an interactive shell; the others without a command run nothing.
    return program === "chroot" && parsed.rest.length > 0
      ? unresolved("`chroot` without a command starts a shell that reads its input")
      : none;
  }
  return {
    kind: "command",
    words,
    more,
    assignments: [],
    writes: valuesOf(parsed, spec, "writes"),
    transparent: spec.transparent,
  };
}

/** `bash -c text`, `bash file`, `bash` reading its input; options may cluster (`-ec`) and `-o`/`-O` take a value. */
function shell(program: string, args: Words): Unwrapped {
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

function trap(args: Words): Unwrapped {
  const rest = args[0] === "--" ? args.slice(1) : args;
  const action = rest[0];
  if (rest.length < 2) return none;
  if (action === undefined) return unresolved("`trap` runs text that is only known when it runs");
  if (action.startsWith("-") && action !== "-") return none;
  if (action === "-" || action === "") return none;
  return { kind: "script", text: action, writes: [], transparent: false };
}

function xargs(args: Words): Unwrapped {
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

function find(args: Words): Unwrapped {
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

function env(args: Words, more: boolean): Unwrapped {
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

function watch(args: Words): Unwrapped {
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

function flock(args: Words, more: boolean): Unwrapped {
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

function su(program: string, args: Words): Unwrapped {
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

function scriptCommand(args: Words): Unwrapped {
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

function tee(args: Words): Unwrapped {
  const spec: OptionSpec = {
    flags: ["-a", "--append", "-i", "--ignore-interrupts", "-p", "--output-error"],
  };
  const parsed = parseOptions("tee", args, spec);
  if (parsed.why !== undefined) return { kind: "writes", targets: [undefined], transparent: false };
  return parsed.rest.length === 0 ? none : { kind: "writes", targets: [...parsed.rest], transparent: false };
}
