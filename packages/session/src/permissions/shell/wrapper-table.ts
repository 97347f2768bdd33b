import type { OptionSpec } from "./wrapper-options.ts";

// The commands the gate knows by name: wrappers with their options (a new wrapper is an entry in WRAPPERS), the
// shells, the programs that never run an argument, and the programs read apart one by one (wrapped-programs.ts).

/** Wrappers that run their command with options first, then positional words, then the command. */
export const WRAPPERS: Record<string, OptionSpec & { transparent: boolean }> = {
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
