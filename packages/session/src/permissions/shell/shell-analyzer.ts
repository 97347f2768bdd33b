import { type Found, type Unbash, Walk } from "./shell-walk.ts";
import { startupReasons } from "./startup-files.ts";
import { writtenThenRun } from "./written-then-run.ts";

/** One command bash starts: a program or a builtin, with its words as bash passes them. */
export interface ShellCommand {
  /** Words after quote removal and escapes; `undefined` where bash expands something only known when it runs. */
  readonly words: readonly (string | undefined)[];
  /** True when more words, unknown here, follow the written ones (`xargs` appends its input). */
  readonly more: boolean;
  /** The text that runs it, as written (for messages). */
  readonly text: string;
  /**
   * True for a wrapper that only changes how its inner command runs (`timeout 9 npm test`, `bash -c '…'`) and for a
   * call of a function defined earlier in the same command: what it runs is listed too, so an allow rule need not
   * cover it. Deny and ask rules still see it.
   */
  readonly transparent: boolean;
}

/** A file the shell writes: a redirection (`>`, `>>`, `&>`, `>|`, `>&file`) or a `tee` target. */
export interface ShellWrite {
  /** The path as bash will open it (home expanded); undefined when it is only known when the command runs. */
  readonly path: string | undefined;
  /** True when `path` is relative (to the shell's working directory). */
  readonly relative: boolean;
  /** As written, for messages. */
  readonly text: string;
}

/** Everything the gate checks in one Bash command. */
export interface ShellAnalysis {
  readonly commands: ShellCommand[];
  readonly writes: ShellWrite[];
  /**
   * What cannot be known before the command runs, one sentence each (a command name from a variable, `eval` of
   * text built at run time, a parse error…). No rule with a specifier allows a command with any.
   */
  readonly unresolved: string[];
}

export interface ShellAnalysisOptions {
  /** For `~` and `~/…`. */
  readonly homeDir: string;
  /** The working directory, to compare the paths a command writes and runs; without it they compare as written. */
  readonly cwd?: string;
}

/** Reads one command the way bash will run it. Never throws: what cannot be read is in `unresolved`. */
export type ShellAnalyzer = (command: string, options: ShellAnalysisOptions) => ShellAnalysis;

let loading: Promise<ShellAnalyzer> | undefined;

/**
 * The analyzer, built on unbash (a bash parser in TypeScript: a typed tree, words with their quoting, substitutions
 * parsed, here-documents read). The parser loads with the first Bash call, not at start-up.
 */
export function shellAnalyzer(): Promise<ShellAnalyzer> {
  loading ??= import("unbash").then(
    (unbash): ShellAnalyzer =>
      (command, options) =>
        analyze(unbash, command, options),
    (error: Error): ShellAnalyzer => {
      // Nothing can be read: every command is unresolved (asked about, never allowed by a rule). The next call
      // tries to load the parser again.
      loading = undefined;
      const why = `the shell parser could not be loaded (${error.message}), so no part of the command can be checked`;
      return () => ({ commands: [], writes: [], unresolved: [why] });
    },
  );
  return loading;
}

function analyze(unbash: Unbash, command: string, options: ShellAnalysisOptions): ShellAnalysis {
  const found: Found = {
    commands: [],
    writes: [],
    unresolved: [],
    executed: [],
    changesDirectory: false,
    reevaluates: false,
    literalSubstitution: false,
    startup: { changed: [], shells: [] },
  };
  try {
    new Walk(unbash, options, found).script(command, 0);
  } catch (error) {
    // Deep nesting can exhaust the stack; whatever the cause, the command is not resolved.
    found.unresolved.push(`the command could not be analysed (${(error as Error).message})`);
  }
  return finish(found, options.cwd);
}

/** Checks that need the whole command: written files that are then run, `cd` before a relative write, re-evaluation. */
function finish(found: Found, cwd: string | undefined): ShellAnalysis {
  found.unresolved.push(...writtenThenRun(found, cwd));
  const writes = found.writes.map((write) => {
    if (write.path === undefined || !write.relative) return write;
    if (found.changesDirectory || write.path.split("/").includes("..")) return { ...write, path: undefined };
    return write;
  });
  found.unresolved.push(...startupReasons(found));
  if (found.reevaluates && found.literalSubstitution)
    found.unresolved.push(
      "bash evaluates some of its text a second time (arithmetic, an array subscript or a variable name), and a literal in it holds `$(` or a backquote that would then run",
    );
  return { commands: found.commands, writes, unresolved: found.unresolved };
}
