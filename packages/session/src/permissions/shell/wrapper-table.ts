import { byProgram } from "./bash-tables.ts";
import { each, type OptionRow, type OptionSpec } from "./wrapper-options.ts";
import {
  CHROOT,
  CHRT,
  DOAS,
  IONICE,
  NICE,
  NOHUP,
  SETSID,
  STDBUF,
  SUDO,
  TASKSET,
  TIME,
  TIMEOUT,
} from "./wrapper-usage.ts";

// The commands the gate knows by name: wrappers with their options (a new wrapper is an entry in WRAPPERS), the
// shells, the programs that never run an argument, and the programs read apart one by one (wrapped-programs.ts).

/** A wrapper: its options, the positional words before its command, and whether rules see through it. */
export type WrapperSpec = OptionSpec & {
  transparent: boolean;
  /** Positional words before the command (timeout's duration, chrt's priority, chroot's folder). */
  positional?: number;
  /** `NAME=value` words before the command set variables for it (sudo's). */
  assignments?: boolean;
};

const noOptions = { options: [] };

/**
 * Wrappers that run their command with options first, then positional words, then the command. The tables of
 * wrapper-usage.ts come from the programs' usage texts; the others are bash builtins and programs kept as the
 * gate first listed them.
 */
export const WRAPPERS = byProgram<WrapperSpec>({
  command: { options: [["-p", "none"], ...each("none", "-v", "-V").map(noCommand)], transparent: true },
  builtin: { ...noOptions, transparent: true },
  exec: { options: [...each("none", "-c", "-l"), ["-a", "required"]], transparent: true },
  nohup: { ...NOHUP, transparent: true },
  noglob: { ...noOptions, transparent: true },
  nocorrect: { ...noOptions, transparent: true },
  catchsegv: { ...noOptions, transparent: true },
  eatmydata: { ...noOptions, transparent: true },
  nice: { ...NICE, transparent: true },
  timeout: { ...TIMEOUT, positional: 1, transparent: true },
  time: { ...TIME, transparent: true },
  stdbuf: { ...STDBUF, transparent: true },
  ionice: { ...IONICE, transparent: true },
  chrt: { ...CHRT, positional: 1, transparent: true },
  setsid: { ...SETSID, transparent: true },
  taskset: { ...TASKSET, positional: 1, transparent: true },
  unbuffer: { options: [["-p", "none"]], transparent: true },
  fakeroot: {
    options: [
      ...each("required", "-l", "--lib", "--faked", "-s", "-i", "-b"),
      ...each("none", "-u", "--unknown-is-real"),
      ...each("none", "-h", "-v", "--version", "--help").map(noCommand),
    ],
    transparent: true,
  },
  "dbus-run-session": { options: each("required", "--config-file", "--dbus-daemon"), transparent: true },
  caffeinate: {
    options: [...each("none", "-d", "-i", "-m", "-s", "-u"), ...each("required", "-t", "-w")],
    transparent: true,
  },
  valgrind: {
    options: [...each("none", "-q", "-v"), ["-h", "none", "noCommand"]],
    longFlags: true,
    transparent: true,
  },
  strace: {
    options: [
      ...each("none", ..."fFcCdDiknqrtTvwxyzZ".split("").map((letter) => `-${letter}`)),
      ...each("none", "--follow-forks", "--summary-only"),
      ...each("required", ..."esuEabIOPSXU".split("").map((letter) => `-${letter}`)),
      ...each("required", "--trace", "--string-limit"),
      ["-o --output", "required", "writes"],
      ...each("required", "-p", "--attach").map(noCommand),
      ...each("none", "-h", "-V").map(noCommand),
    ],
    transparent: true,
  },
  ltrace: {
    options: [
      ...each("none", ..."bcCfiLrStTw".split("").map((letter) => `-${letter}`)),
      ...each("required", ..."esuaADFlnx".split("").map((letter) => `-${letter}`)),
      ["-o --output", "required", "writes"],
      ["-p", "required", "noCommand"],
      ...each("none", "-h", "-V").map(noCommand),
    ],
    transparent: true,
  },
  sudo: { ...SUDO, assignments: true, transparent: false },
  doas: { ...DOAS, transparent: false },
  chroot: { ...CHROOT, positional: 1, transparent: false },
});

/** The row of an option after which the wrapper runs nothing. */
function noCommand([names, arity]: OptionRow): OptionRow {
  return [names, arity, "noCommand"];
}

export const SHELLS = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "posh",
  "yash",
  "ksh93",
  "rbash",
]);
export const OTHER_SHELLS = new Set(["fish", "csh", "tcsh", "pwsh", "powershell", "nu", "xonsh", "elvish"]);

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

/** The programs `unwrapCommand` reads apart by name (beside the wrappers, the shells and the builtins that run nothing). */
const UNWRAPPED_PROGRAMS = new Set([
  ...["eval", "source", ".", "trap", "alias", "coproc", "xargs", "find", "env", "watch", "flock", "su"],
  ...["runuser", "script", "busybox", "toybox", "tee", "hash", "enable"],
  // Builtins whose text the walk reads (builtin-text.ts).
  ...["compgen", "complete", "mapfile", "readarray", "fc", "bind"],
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

/** Words that start a compound command: after `time` or any wrapper, the grammar splits them apart. */
export const RESERVED = new Set([
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
