import { EXTDEBUG } from "./builtin-text.ts";
import type { Found } from "./shell-walk.ts";
import { clip } from "./shell-words.ts";

// A shell reads start-up files before the command it is given: an interactive one `~/.bashrc` (or its
// `--rcfile`/`--init-file`), a login one (`-l`, `--login`, or started as `-bash`) `/etc/profile` and
// `~/.bash_profile`, `~/.bash_login` or `~/.profile`; bash run with SSH_CLIENT set reads `~/.bashrc` even to run
// `-c`; zsh reads `~/.zshenv` always. So a shell the command starts runs those files, from HOME as the command
// leaves it.

/** What the command does to the start-up files of the shells it starts. */
export interface Startup {
  /** How the command changes where they are read from (`HOME=…`, `read HOME`, `unset HOME`), one each. */
  readonly changed: string[];
  /** The shells it starts, as written. */
  readonly shells: string[];
}

/** Start-up files, relative to HOME, that a shell may read (bash, sh, zsh, ksh), and the system's own. */
const HOME_FILES = [".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout", ".zshenv"];
const OTHER_HOME_FILES = [".zprofile", ".zshrc", ".zlogin", ".kshrc", ".mkshrc", ".inputrc"];
const SYSTEM_FILES = ["/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshenv", "/etc/zsh/zshenv"];

/** Their names (the last part of each path): any of them in one pattern compiled once, and the shortest's length. */
const NAMES = [
  ...HOME_FILES,
  ...OTHER_HOME_FILES,
  ...SYSTEM_FILES.map((path) => path.slice(path.lastIndexOf("/") + 1)),
];
const ANY_NAME = new RegExp(NAMES.map((name) => name.replaceAll(".", "\\.")).join("|"));
const SHORTEST = Math.min(...NAMES.map((name) => name.length));

/** True when `word` holds the name of a start-up file a shell may read (a cheap first look, before each file's own). */
export const mayNameStartupFile = (word: string): boolean => word.length >= SHORTEST && ANY_NAME.test(word);

/**
 * A shell the command starts, given `args`: its start-up files are run (so a write to one in the same command is
 * a file written then run), and a file named by `--rcfile`/`--init-file` is one the gate does not read.
 */
export function noteShellStart(
  found: Found,
  args: readonly (string | undefined)[],
  homeDir: string,
  text: string,
  stdin: string | undefined | null,
): void {
  found.startup.shells.push(text);
  // An interactive shell reading its commands from its input expands history in them (`!!`, `^old^new`).
  const flags = shellFlags(args);
  if (/i/.test(flags) && !/c/.test(flags) && typeof stdin === "string" && /!|^\s*\^/m.test(stdin))
    found.unresolved.push(
      `\`${clip(text)}\` is interactive, so it expands history (\`!!\`, \`^old^new\`) in the lines it reads, which the gate does not follow`,
    );
  // The shell is the command the walk noted last: a write before it to one of these files is written then run.
  // Every shell started reads the same files (HOME as the command leaves it is checked apart), and a file is
  // looked at once, where the first shell runs it: later shells add none.
  const command = found.commands.length - 1;
  if (found.startup.shells.length === 1) {
    for (const file of [...HOME_FILES, ...OTHER_HOME_FILES])
      found.executed.push({ path: `${homeDir}/${file}`, command, startup: true });
    for (const path of SYSTEM_FILES) found.executed.push({ path, command, startup: true });
  }
  for (const [index, word] of args.entries()) {
    const option = /^-\w*O$/.test(word ?? "") ? args[index + 1] : null;
    if (word === "--debugger" || option === undefined || option === "extdebug")
      found.unresolved.push(EXTDEBUG);
    if (word !== "--rcfile" && word !== "--init-file") continue;
    found.unresolved.push(
      `\`${clip(text)}\` runs \`${args[index + 1] ?? "…"}\` as its start-up file, whose content is not checked`,
    );
  }
}

/** The one-letter options a shell is given (`-ic`, `+x`), up to its first operand. */
function shellFlags(args: readonly (string | undefined)[]): string {
  let flags = "";
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === undefined || !/^[-+]./.test(word) || word === "--") break;
    if (/^[-+][^-]/.test(word)) flags += word.slice(1);
    if (/^[-+]\w*[oO]$/.test(word) || word === "--rcfile" || word === "--init-file") index++;
  }
  return flags;
}

/** Why the command is unresolved when it starts a shell after changing where its start-up files are read from. */
export function startupReasons({ startup }: Found): string[] {
  const [changed] = startup.changed;
  const [shell] = startup.shells;
  if (changed === undefined || shell === undefined) return [];
  return [
    `${changed} and starts a shell (\`${clip(shell)}\`), which runs start-up files from there that the gate does not read`,
  ];
}
