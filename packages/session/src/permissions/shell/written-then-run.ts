import { posix } from "node:path";
import type { ShellCommand, ShellWrite } from "./shell-analyzer.ts";
import { clip, programName } from "./shell-words.ts";
import { mayNameStartupFile } from "./startup-files.ts";
import { unwrapCommand } from "./wrappers.ts";

// A file the command runs (`bash f`, `. f`, `./f`, a path as the program) whose content the same command may have
// written, copied or linked first. The gate reads the command, not the disk, so such a run is unresolvable: never
// allowed by a rule, asked about naming the file.

/** A file the command runs, and the index in the walk's commands of the command that runs it. */
export interface RunFile {
  readonly path: string;
  readonly command: number;
  /** A start-up file of a shell the command starts (it may read it): only a write that names it changes it. */
  readonly startup?: boolean;
}

/** What the check reads of the walk's findings. */
interface RunsAndWrites {
  readonly commands: readonly ShellCommand[];
  readonly writes: readonly ShellWrite[];
  readonly executed: readonly RunFile[];
  readonly changesDirectory: boolean;
}

/**
 * Programs whose manuals give them no way to write, copy, link or move a file (beside the redirections the walk
 * reads): they print, compare, look up or set the shell's own state. Anything else may write files (`cp`, `mv`,
 * `ln`, `install`, `sed -i` and `w`, `awk`'s `>`, `dd of=`, `tar -x`, `curl -o`, interpreters, build tools, `git`)
 * or run what does.
 */
const WRITE_NOTHING = new Set([
  ...["ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo", "printf", "pwd", "test", "["],
  ...["true", "false", ":", "basename", "dirname", "realpath", "readlink", "stat", "which", "type", "help"],
  ...["diff", "cmp", "comm", "cut", "tr", "nl", "tac", "rev", "fold", "paste", "join", "expand", "unexpand"],
  ...["seq", "sleep", "expr", "printenv", "id", "whoami", "uname", "date", "du", "df", "nproc", "tty", "yes"],
  ...["md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "base64", "od", "hexdump", "jq"],
  // Builtins that change only the shell's state (a change of directory is read apart: `Changes.moved`).
  ...["cd", "pushd", "popd", "dirs", "read", "mapfile", "readarray", "exit", "return", "shift", "break"],
  ...["continue", "unset", "export", "declare", "local", "readonly", "typeset", "let", "set", "shopt"],
  ...["getopts", "umask", "ulimit", "jobs", "wait", "times", "command", "hash"],
  // Wrappers given no command: `exec` with redirections only (read as writes), `env` printing the environment.
  ...["exec", "env"],
]);

/** `sort -o file` (and `--output`, `--compress-program`, which runs a program) writes; without them it prints. */
const sortWrites = (args: ShellCommand["words"]) =>
  args.some((word) => word === undefined || /^-[^-]*o|^--(o|co)/.test(word));

/** The common places of programs, where a copy of a program that writes nothing is that program. */
const SYSTEM_FOLDER = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

/**
 * Whether a command may write a file the walk does not record as a write: not a wrapper or shell text whose
 * commands the walk lists itself, nor a program known to write nothing, nor `tee` (its files are writes).
 */
function mayWrite(command: ShellCommand): boolean {
  if (command.transparent) return false;
  const [name, ...args] = command.words;
  if (name === undefined) return true;
  const program = programName(name);
  if (name.includes("/") && !SYSTEM_FOLDER.test(name)) return true;
  if (program === "sort") return sortWrites(args);
  if (WRITE_NOTHING.has(program)) return false;
  const inner = unwrapCommand(program, args, command.more);
  // A wrapper, `trap`, `su -c`, `alias`…: the commands they run are walked, the files they write are recorded.
  if (["command", "commands", "writes", "scripts"].includes(inner.kind)) return false;
  return !(inner.kind === "script" && inner.text !== undefined);
}

/** The indices of the commands with a word that holds the name of a start-up file run, or is only known at run time. */
function namingStartupFiles(found: RunsAndWrites): number[] {
  const naming: number[] = [];
  for (const [index, command] of found.commands.entries())
    if (command.words.some((word) => word === undefined || mayNameStartupFile(word))) naming.push(index);
  return naming;
}

/** The path as bash opens it: relative to the working directory when known, `.`, `..` and `//` resolved. */
function located(path: string, cwd: string | undefined): string {
  if (path.startsWith("/")) return posix.normalize(path).replace(/^\/\/+/, "/");
  return cwd === undefined ? posix.normalize(path).replace(/^\.\//, "") : posix.resolve(cwd, path);
}

/** The command's writes and writers, read once for all the files it runs. */
interface Changes {
  /** Each written path as bash opens it, with the write. */
  readonly written: Map<string, ShellWrite>;
  /** A write that may be to any file: a path known only at run time, or through /proc. */
  readonly anywhere: ShellWrite | undefined;
  /**
   * When the command changes directory, relative paths name files only known at run time: a relative write may be
   * any run, and any write may be a relative run.
   */
  readonly moved: { relativeWrite?: ShellWrite; anyWrite?: ShellWrite };
  /** The first command that may write files and runs no file itself, by index (read when first needed). */
  writer(): number | undefined;
  /** The first commands that run a file (which may write another), for the first two files they run. */
  runners(): { at: string; index: number }[];
  /**
   * The commands that may write files and may name a start-up file the command's shells read (a word holds one of
   * their names, or is known only at run time), in order: found in one look at each command for all those files.
   */
  naming(): readonly number[];
}

function changesOf(found: RunsAndWrites, cwd: string | undefined): Changes {
  const written = new Map<string, ShellWrite>();
  let anywhere: ShellWrite | undefined;
  for (const write of found.writes) {
    const there = write.path === undefined ? undefined : located(write.path, cwd);
    if (there === undefined || there.startsWith("/proc/")) anywhere ??= write;
    else if (!written.has(there)) written.set(there, write);
  }
  const moved = found.changesDirectory
    ? { relativeWrite: found.writes.find((write) => write.relative), anyWrite: found.writes[0] }
    : {};
  const judged: (boolean | undefined)[] = [];
  const writes = (index: number): boolean => {
    const command = found.commands[index];
    if (command === undefined) return false;
    judged[index] ??= mayWrite(command);
    return judged[index];
  };
  let runs: Map<number, string> | undefined;
  const runsOf = () => {
    runs ??= new Map(
      found.executed.filter((run) => !run.startup).map((run) => [run.command, located(run.path, cwd)]),
    );
    return runs;
  };
  let naming: number[] | undefined;
  return {
    written,
    anywhere,
    moved,
    naming: () => {
      naming ??= namingStartupFiles(found).filter((index) => writes(index));
      return naming;
    },
    writer: () => {
      const running = runsOf();
      const writer = found.commands.findIndex((_, index) => !running.has(index) && writes(index));
      return writer === -1 ? undefined : writer;
    },
    runners: () => {
      const runners: { at: string; index: number }[] = [];
      for (const [index, at] of runsOf()) {
        const command = found.commands[index];
        if (runners.length >= 2 || runners.some((runner) => runner.at === at) || command === undefined)
          continue;
        if (writes(index)) runners.push({ at, index });
      }
      return runners;
    },
  };
}

/** Why a run of `run.path` is unresolvable, or undefined when nothing the command does may have changed it. */
function whyUnresolvable(run: RunFile, found: RunsAndWrites, changes: Changes, cwd: string | undefined) {
  const at = located(run.path, cwd);
  const named = `it runs \`${clip(run.path)}\``;
  if (at.startsWith("/proc/"))
    return `${named}, a path through /proc that may be its own input or any file, whose content is not checked`;
  const write =
    changes.written.get(at) ??
    (run.path.startsWith("/") ? changes.moved.relativeWrite : changes.moved.anyWrite);
  if (write !== undefined)
    return `${named}, a file the same command writes (\`${clip(write.text)}\`), whose content is not checked`;
  if (changes.anywhere !== undefined)
    return `${named} after writing to \`${clip(changes.anywhere.text)}\`, a path known only when it runs, which may be that file`;
  if (run.startup) return startupWriter(run, found.commands, changes, named);
  // Another run of a file is a writer too (a script may write the next one), but not a run of the same file: what
  // that file does is not checked either way (`./gradlew clean && ./gradlew build`).
  const writer = changes.writer() ?? changes.runners().find((runner) => runner.at !== at)?.index;
  if (writer === undefined) return undefined;
  return `${named}, and \`${clip(found.commands[writer]?.text ?? "")}\` in the same command may write, copy or link that file first, so what runs is not what the command shows`;
}

/**
 * A shell's start-up file is changed only by a command that names it (`cp r ~/.bashrc`, `sed -i … .profile`) or
 * whose words are known only when it runs: any program that may write files would make every shell start
 * unresolvable, where most shells the command starts read none of them.
 */
function startupWriter(
  run: RunFile,
  commands: readonly ShellCommand[],
  changes: Changes,
  named: string,
): string | undefined {
  const name = posix.basename(run.path);
  // The first command that names the file and may write files.
  const index = changes
    .naming()
    .find(
      (index) => commands[index]?.words.some((word) => word === undefined || word.includes(name)) === true,
    );
  const writer = index === undefined ? undefined : commands[index];
  if (writer === undefined) return undefined;
  return `${named} as a start-up file of a shell it starts, and \`${clip(writer.text)}\` in the same command may write it first`;
}

/**
 * Why the command's first run of a file it may also have written, linked or reached by another path first is
 * unresolvable (none: an empty list). Conservative: a program that may write files counts wherever it stands in
 * the command, since loops, functions and traps decide at run time what runs first.
 */
export function writtenThenRun(found: RunsAndWrites, cwd: string | undefined): string[] {
  if (found.executed.length === 0) return [];
  const changes = changesOf(found, cwd);
  // A program in a system folder last: the reason then names the file the command most likely wrote (each path
  // tested once; the order is otherwise kept, as a stable sort on that one key would).
  const elsewhere: RunFile[] = [];
  const system: RunFile[] = [];
  for (const run of found.executed) (SYSTEM_FOLDER.test(run.path) ? system : elsewhere).push(run);
  // Each shell started adds the same start-up files: one look at each path is enough.
  const seen = new Set<string>();
  for (const run of [...elsewhere, ...system]) {
    if (run.startup) {
      if (seen.has(run.path)) continue;
      seen.add(run.path);
    }
    const why = whyUnresolvable(run, found, changes, cwd);
    if (why !== undefined) return [why];
  }
  return [];
}
