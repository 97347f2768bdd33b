import { posix } from "node:path";

// What bash does with names, as its manual says: variables that make it run code, builtins that assign variables
// or read text a second time, files that are not files, redirections that write. The walk of a command
// (shell-walk.ts) checks every name it meets against these.

/** Variables that make bash or the programs it starts run code or load files not in the command. */
const CODE_VARIABLES = new Set([
  "PATH",
  "BASH_ENV",
  "ENV",
  // bash's own tables: assigning `BASH_CMDS[name]` is `hash -p`, assigning `BASH_ALIASES[name]` is `alias`.
  "BASH_CMDS",
  "BASH_ALIASES",
  // Prompts, expanded (and so their substitutions run) by an interactive shell, `select` and `set -x`.
  "PS0",
  "PS1",
  "PS2",
  "PS3",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  "DYLD_INSERT_LIBRARIES",
  "DYLD_LIBRARY_PATH",
  "NODE_OPTIONS",
  "PYTHONSTARTUP",
  "PERL5OPT",
  "RUBYOPT",
  "PAGER",
  "MANPAGER",
  "EDITOR",
  "VISUAL",
  "LESSOPEN",
  "LESSCLOSE",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_PAGER",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "GIT_EXTERNAL_DIFF",
  "GIT_ASKPASS",
  "GIT_PROXY_COMMAND",
  "GIT_EXEC_PATH",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  // Configuration files and folders that can hold commands (git's `core.fsmonitor`, `core.pager`, aliases, hooks).
  "GIT_CONFIG",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_DIR",
  "GIT_TEMPLATE_DIR",
  "XDG_CONFIG_HOME",
  // The shell a program starts for a command (`flock -c`, `script`, `sudo -s`).
  "SHELL",
  // make reads its options from these (`--eval` runs `$(shell …)`).
  "MAKEFLAGS",
  "GNUMAKEFLAGS",
  "MFLAGS",
  // Editors' and pagers' start-up commands and the programs they hand text to.
  "VIMINIT",
  "EXINIT",
  "MYVIMRC",
  "MANOPT",
  "LESS",
  "LESSKEY",
  "LESSKEYIN",
  "SYSTEMD_PAGER",
  "SYSTEMD_EDITOR",
  "SUDO_EDITOR",
  "FCEDIT",
  "BROWSER",
  // Code loaded into a runtime: converter modules, Java and .NET agents, the breakpoint hook.
  "GCONV_PATH",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "DOTNET_STARTUP_HOOKS",
  "PYTHONBREAKPOINT",
]);
/** npm's (and pnpm's) settings that choose what runs scripts or where more settings come from; any case. */
const NPM_CODE_SETTING =
  /^npm_config_(script_shell|node_options|userconfig|globalconfig|shell|editor|browser|git)$/i;
export const isCodeVariable = (name: string) =>
  CODE_VARIABLES.has(name) ||
  /^(BASH_FUNC_|GIT_CONFIG_(KEY|VALUE)_)/.test(name) ||
  NPM_CODE_SETTING.test(name);

/** Variables that say where a shell reads its start-up files from (see startup-files.ts). */
export const isStartupVariable = (name: string) => name === "HOME" || name === "ZDOTDIR";

/** The options that take a value, of the builtins that assign the variables named by their operands (bash's manual). */
export const ASSIGNING_OPTIONS = byProgram({
  read: "adinNptu",
  mapfile: "dnOsuCc",
  readarray: "dnOsuCc",
  wait: "p",
});
/** The option whose value is a variable the builtin assigns (`read -a NAME`, `wait -p NAME`). */
export const NAMING_OPTION = byProgram({ read: "a", wait: "p" });

/**
 * A table looked up by a command's program name, without a prototype: a program named `toString`, `constructor`
 * or `__proto__` finds nothing in it, not an object's inherited member.
 */
export function byProgram<Value>(
  entries: Record<string, Value>,
): Readonly<Record<string, Value | undefined>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, Value | undefined>, entries));
}
export const DECLARING_BUILTINS = new Set(["declare", "typeset", "local", "export", "readonly"]);

/** Builtins that read text as arithmetic or as a variable name, where bash may expand `a[$(…)]` a second time. */
export const REEVALUATING_BUILTINS = new Set([
  "let",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "unset",
  "printf",
  "read",
  "mapfile",
  "readarray",
  "test",
  "[",
  "wait",
  "getopts",
]);

/** Files that are not files: writing to them writes nowhere on disk. */
export const NOT_A_FILE = /^\/dev\/(null|stdout|stderr|tty|zero|full|fd\/\d+)$|^\/proc\/self\/fd\/\d+$/;

/**
 * A script path that is the command's own input (or another open descriptor) rather than a file, tested after
 * `.`, `..` and repeated slashes are resolved (`/dev/./stdin`, `//dev/stdin`, `/proc/thread-self/fd/0`).
 */
const READS_INPUT = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|thread-self|\d+)(\/task\/\d+)?\/fd\/\d+)$/;
export const readsInput = (file: string) => READS_INPUT.test(posix.normalize(file));

/** Redirection operators that open their destination for writing. */
export const WRITING_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>", ">&", "<>"]);
