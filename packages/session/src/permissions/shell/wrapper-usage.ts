import type { OptionSpec } from "./wrapper-options.ts";

// The options of the wrappers the gate reads most, one row per option, each table taken from the program's usage
// text (`--help`) and its getopt option string (in the binary) on Debian 12: GNU coreutils 9.1, GNU findutils 4.9.0, GNU time 1.9,
// util-linux 2.38.1, procps-ng 4.0.2, sudo 1.9.13p3, OpenBSD doas 6.8 (opendoas). A short and a long name share a row only when
// getopt_long gives both the same arity. An option missing here makes the call unresolved.

/** `--help` and `--version` of GNU and util-linux programs: they print and exit. */
const HELP_VERSION = [
  ["--help", "none", "noCommand"],
  ["--version", "none", "noCommand"],
] as const;
/** util-linux's `-h, --help` and `-V, --version`. */
const UTIL_LINUX_HELP_VERSION = [
  ["-h --help", "none", "noCommand"],
  ["-V --version", "none", "noCommand"],
] as const;

/** xargs (GNU findutils 4.9.0), `+0a:E:e::i::I:l::L:n:oprs:txP:d:`. */
export const XARGS: OptionSpec = {
  options: [
    ["-0 --null", "none"],
    ["-a --arg-file", "required"],
    ["-d --delimiter", "required"],
    ["-E", "required"],
    ["-e --eof", "optional"],
    ["-I", "required"],
    ["-i --replace", "optional"],
    ["-L", "required"],
    ["-l --max-lines", "optional"],
    ["-n --max-args", "required"],
    ["-o --open-tty", "none"],
    ["-P --max-procs", "required"],
    ["-p --interactive", "none"],
    ["--process-slot-var", "required"],
    ["-r --no-run-if-empty", "none"],
    ["-s --max-chars", "required"],
    ["--show-limits", "none"],
    ["-t --verbose", "none"],
    ["-x --exit", "none"],
    ...HELP_VERSION,
  ],
};

/** env (GNU coreutils 9.1), `+C:iS:u:v0`; `-S` text is read again as options and command. */
export const ENV: OptionSpec = {
  options: [
    ["-i --ignore-environment", "none"],
    ["-0 --null", "none"],
    ["-u --unset", "required"],
    ["-C --chdir", "required"],
    ["-S --split-string", "required", "split"],
    ["--block-signal", "optional"],
    ["--default-signal", "optional"],
    ["--ignore-signal", "optional"],
    ["--list-signal-handling", "none"],
    ["-v --debug", "none"],
    ...HELP_VERSION,
  ],
};

/** timeout (GNU coreutils 9.1), `+k:s:v`, then DURATION. */
export const TIMEOUT: OptionSpec = {
  options: [
    ["--preserve-status", "none"],
    ["--foreground", "none"],
    ["-k --kill-after", "required"],
    ["-s --signal", "required"],
    ["-v --verbose", "none"],
    ...HELP_VERSION,
  ],
};

/** nice (GNU coreutils 9.1), `+n:`; `-N`, `--N` and `-+N` are adjustments. */
export const NICE: OptionSpec = {
  options: [["-n --adjustment", "required"], ...HELP_VERSION],
  numberFlags: true,
};

/** stdbuf (GNU coreutils 9.1), `+i:o:e:`. */
export const STDBUF: OptionSpec = {
  options: [
    ["-i --input", "required"],
    ["-o --output", "required"],
    ["-e --error", "required"],
    ...HELP_VERSION,
  ],
};

/** nohup (GNU coreutils 9.1): `--help` and `--version` only. */
export const NOHUP: OptionSpec = { options: HELP_VERSION };

/** chroot (GNU coreutils 9.1), then NEWROOT. */
export const CHROOT: OptionSpec = {
  options: [["--groups", "required"], ["--userspec", "required"], ["--skip-chdir", "none"], ...HELP_VERSION],
};

/**
 * GNU time 1.9 (`/usr/bin/time`, `command time`), `+af:o:pqvV`. bash's `time` keyword reads `-p` only, and a
 * word after it that is not `-p` or `--` is the command; reading GNU time's options there asks or denies more.
 */
export const TIME: OptionSpec = {
  options: [
    ["-a --append", "none"],
    ["-f --format", "required"],
    ["-o --output", "required", "writes"],
    ["-p --portability", "none"],
    ["-q --quiet", "none"],
    ["-v --verbose", "none"],
    ["-h --help", "none", "noCommand"],
    ["-V --version", "none", "noCommand"],
  ],
};

/** setsid (util-linux 2.38.1), `+Vhcfw`. */
export const SETSID: OptionSpec = {
  options: [["-c --ctty", "none"], ["-f --fork", "none"], ["-w --wait", "none"], ...UTIL_LINUX_HELP_VERSION],
};

/** flock (util-linux 2.38.1), `+sexnoFuw:E:hV?`; `-c text` is read after the file, not as an option. */
export const FLOCK: OptionSpec = {
  options: [
    ["-s --shared", "none"],
    ["-x -e --exclusive", "none"],
    ["-u --unlock", "none"],
    ["-n --nonblocking --nb", "none"],
    ["-w --timeout --wait", "required"],
    ["-E --conflict-exit-code", "required"],
    ["-o --close", "none"],
    ["-F --no-fork", "none"],
    ["--verbose", "none"],
    ["-? -h --help", "none", "noCommand"],
    ["-V --version", "none", "noCommand"],
  ],
};

/** script (util-linux 2.38.1), `aB:c:eE:fI:O:o:qm:T:t::Vh`: no `+`, so options may follow the file. */
export const SCRIPT: OptionSpec = {
  options: [
    ["-I --log-in", "required", "writes"],
    ["-O --log-out", "required", "writes"],
    ["-B --log-io", "required", "writes"],
    ["-T --log-timing", "required", "writes"],
    ["-t --timing", "optional", "writes"],
    ["-m --logging-format", "required"],
    ["-a --append", "none"],
    ["-c --command", "required", "script"],
    ["-e --return", "none"],
    ["-f --flush", "none"],
    ["--force", "none"],
    ["-E --echo", "required"],
    ["-o --output-limit", "required"],
    ["-q --quiet", "none"],
    ...UTIL_LINUX_HELP_VERSION,
  ],
  permute: true,
};

/** taskset (util-linux 2.38.1), `+apchV`, then the mask or list. */
export const TASKSET: OptionSpec = {
  options: [
    ["-a --all-tasks", "none"],
    ["-p --pid", "none", "noCommand"],
    ["-c --cpu-list", "none"],
    ...UTIL_LINUX_HELP_VERSION,
  ],
};

/** chrt (util-linux 2.38.1), `+abdD:fiphmoP:T:rRvV`, then the priority. */
export const CHRT: OptionSpec = {
  options: [
    ["-b --batch", "none"],
    ["-d --deadline", "none"],
    ["-f --fifo", "none"],
    ["-i --idle", "none"],
    ["-o --other", "none"],
    ["-r --rr", "none"],
    ["-R --reset-on-fork", "none"],
    ["-T --sched-runtime", "required"],
    ["-P --sched-period", "required"],
    ["-D --sched-deadline", "required"],
    ["-a --all-tasks", "none"],
    ["-m --max", "none", "noCommand"],
    ["-p --pid", "none", "noCommand"],
    ["-v --verbose", "none"],
    ...UTIL_LINUX_HELP_VERSION,
  ],
};

/** ionice (util-linux 2.38.1), `+n:c:p:P:u:tVh`; `-p`, `-P` and `-u` act on running processes. */
export const IONICE: OptionSpec = {
  options: [
    ["-c --class", "required"],
    ["-n --classdata", "required"],
    ["-p --pid", "required", "noCommand"],
    ["-P --pgid", "required", "noCommand"],
    ["-t --ignore", "none"],
    ["-u --uid", "required", "noCommand"],
    ...UTIL_LINUX_HELP_VERSION,
  ],
};

/** watch (procps-ng 4.0.2), `+bced::ghq:n:pvtwx`; without `-x` it joins its words and runs them with `sh -c`. */
export const WATCH: OptionSpec = {
  options: [
    ["-b --beep", "none"],
    ["-c --color", "none"],
    ["-d --differences", "optional"],
    ["-e --errexit", "none"],
    ["-g --chgexit", "none"],
    ["-q --equexit", "required"],
    ["-n --interval", "required"],
    ["-p --precise", "none"],
    ["-t --no-title", "none"],
    ["-w --no-wrap", "none"],
    ["-x --exec", "none"],
    ["-h --help", "none", "noCommand"],
    ["-v --version", "none", "noCommand"],
  ],
};

const SUDO_EDITS = { refuse: "`sudo -e` edits files as another user" };

/**
 * sudo (1.9.13p3), `+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`; `-k` runs the command that follows, `NAME=value`
 * words before the command set variables, `-s` and `-i` alone start a shell reading its input.
 */
export const SUDO: OptionSpec = {
  options: [
    ["-A --askpass", "none"],
    ["-a --auth-type", "required"],
    ["-b --background", "none"],
    ["-B --bell", "none"],
    ["-C --close-from", "required"],
    ["-c --login-class", "required"],
    ["-D --chdir", "required"],
    ["-E", "none"],
    ["--preserve-env", "optional"],
    ["-e --edit", "none", SUDO_EDITS],
    ["-g --group", "required"],
    ["-H --set-home", "none"],
    // `-h` alone prints the help; `-hhost` (or `--host host`) names a host.
    ["-h", "optional"],
    ["--help", "none", "noCommand"],
    ["--host", "required"],
    ["-i --login", "none", "shell"],
    ["-K --remove-timestamp", "none", "noCommand"],
    ["-k --reset-timestamp", "none"],
    ["-l --list", "none", "noCommand"],
    ["-N --no-update", "none"],
    ["-n --non-interactive", "none"],
    ["-P --preserve-groups", "none"],
    ["-p --prompt", "required"],
    ["-R --chroot", "required"],
    ["-r --role", "required"],
    ["-S --stdin", "none"],
    ["-s --shell", "none", "shell"],
    ["-T --command-timeout", "required"],
    ["-t --type", "required"],
    ["-U --other-user", "required"],
    ["-u --user", "required"],
    ["-V --version", "none", "noCommand"],
    ["-v --validate", "none", "noCommand"],
  ],
};

/** doas (OpenBSD doas 6.8, Debian's opendoas), `+C:Lnsu:`: no long options. */
export const DOAS: OptionSpec = {
  options: [
    ["-C", "required", "noCommand"],
    ["-L", "none", "noCommand"],
    ["-n", "none"],
    ["-s", "none", { refuse: "`doas -s` starts a shell that reads commands from its input" }],
    ["-u", "required"],
  ],
};
