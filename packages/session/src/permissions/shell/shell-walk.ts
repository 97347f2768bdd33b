import type { Assignment, Command, ParsedScript, Redirect, SyntaxNode, Word } from "unbash";
import {
  type Assigning,
  arithmetic,
  assignedBy,
  assigns,
  onlyDeclares,
  setsVariable,
} from "./assigned-variables.ts";
import { NOT_A_FILE, REEVALUATING_BUILTINS, readsInput, WRITING_REDIRECTS } from "./bash-tables.ts";
import { definitions, type RunsText, textRunBy } from "./builtin-text.ts";
import {
  EvaluatedTwice,
  noteEvaluatedTwice,
  noteEvaluatingCommand,
  type TwicePlace,
  twicePlace,
} from "./evaluated-twice.ts";
import type { ShellAnalysisOptions, ShellCommand, ShellWrite } from "./shell-analyzer.ts";
import { clip, partValue, plainArithmetic, programName, spelled, stdinOf } from "./shell-words.ts";
import { noteShellStart, type Startup } from "./startup-files.ts";
import { SHELLS } from "./wrapper-table.ts";
import { unwrapCommand } from "./wrappers.ts";
import type { RunFile } from "./written-then-run.ts";

/** The unbash module, loaded with the first Bash call (see shell-analyzer.ts). */
export type Unbash = typeof import("unbash");

/**
 * How many times text may be parsed again inside itself (`bash -c "bash -c '…'"`, `eval`, `trap`, an alias body)
 * and how many wrappers may stack (`nice nohup timeout 9 …`). No real command comes near either; past them the
 * command is unresolved rather than partly checked.
 */
const MAX_NESTING = 8;
const MAX_WRAPPERS = 32;

/** What the walk has found so far in one command. */
export interface Found {
  commands: ShellCommand[];
  writes: ShellWrite[];
  unresolved: string[];
  /** Paths run as programs or scripts (`./x`, `bash x`, `source x`), as written, with the command that runs them. */
  executed: RunFile[];
  /** The command changes the shell's directory somewhere (`cd`, `pushd`, `popd`). */
  changesDirectory: boolean;
  /** Some part makes bash evaluate text again (arithmetic, subscripts, `${!x}`, `${x@P}`, …). */
  reevaluates: boolean;
  /** Some literal text contains `$(` or a backquote. */
  literalSubstitution: boolean;
  /** Shells the command starts, and how it changes where they read their start-up files. */
  startup: Startup;
}

/** Where the walk is: the script's text, and whether what it meets runs every time (for function definitions). */
interface Place {
  readonly source: string;
  readonly depth: number;
  /** The subshell (or script) a function defined here lasts in, as a range of `source`; undefined: not recorded. */
  readonly scope: { from: number; to: number } | undefined;
  /** False inside `if`, loops, `case`, `&&`/`||` after the first, pipelines and function bodies. */
  readonly always: boolean;
  /** Like `always`, but true again at the start of a function body: runs whenever the body it is in runs. */
  readonly settled: boolean;
  /** The function body the walk is in, if any. */
  readonly body: { from: number; to: number } | undefined;
  /** The same place as text evaluated twice reads it: made once with the place, read at every node under it. */
  readonly twice: TwicePlace;
}

/** A place, with its reading for text evaluated twice. */
function placeAt(
  source: string,
  depth: number,
  scope: Place["scope"],
  always: boolean,
  settled: boolean,
  body: Place["body"],
): Place {
  return { source, depth, scope, always, settled, body, twice: twicePlace({ source, settled, scope, body }) };
}

/** The place inside a construct whose parts run only when `runs` (a branch, a loop, `&&` after the first). */
const unsure = (place: Place, runs: boolean): Place =>
  runs ? place : placeAt(place.source, place.depth, place.scope, false, false, place.body);

/** The same place in another scope (a subshell, a pipeline's part, a substitution's text). */
const scoped = (place: Place, scope: Place["scope"], source = place.source): Place =>
  placeAt(source, place.depth, scope, place.always, place.settled, place.body);

/** The place inside a function body: nothing in it always runs, but its start runs whenever the body does. */
const inBody = (place: Place, body: { pos: number; end: number }): Place =>
  placeAt(place.source, place.depth, place.scope, false, true, { from: body.pos, to: body.end });

const hasSubstitutionText = (text: string) => text.includes("$(") || text.includes("`");

/** Walks a command's syntax tree (and the text it runs in turn) the way bash will run it, recording into `found`. */
export class Walk {
  /**
   * Functions defined where they always run, by name: where each definition ends and the scope it lasts in (looked
   * up by the name called, so a call costs the definitions of its own name, not of every function before it).
   */
  private functions = new Map<string, { end: number; from: number; to: number }[]>();
  /** Every function name the script being walked defines, wherever; and those it unsets (`*`: any). */
  private functionNames = new Set<string>();
  private unsetFunctions = new Set<string>();
  /** The script's text evaluated a second time, and the variables it reads there. */
  private twice = new EvaluatedTwice();
  /** Where assignments are recorded: the findings and the current script's `twice`. */
  private vars: Assigning;
  /** The place of the children `visitChild` walks (one callback for every node, not a closure per node). */
  private childPlace: Place | undefined;
  private readonly visitChild = (child: SyntaxNode): void => {
    this.visit(child, this.childPlace as Place);
  };
  private readonly decodeWord = (word: Word): string | undefined => this.decode(word);
  private readonly unbash: Unbash;
  private readonly options: ShellAnalysisOptions;
  private readonly found: Found;

  constructor(unbash: Unbash, options: ShellAnalysisOptions, found: Found) {
    this.unbash = unbash;
    this.options = options;
    this.found = found;
    this.vars = { found, twice: this.twice };
  }

  /** Parses `text` (the command, or text it runs: `bash -c`, `eval`, …) and walks it. */
  script(text: string, depth: number): void {
    if (depth > MAX_NESTING) {
      this.found.unresolved.push(`it nests commands in strings more than ${MAX_NESTING} levels deep`);
      return;
    }
    const tree = this.unbash.parse(text);
    const outer = this.functions;
    const [outerNames, outerUnset] = [this.functionNames, this.unsetFunctions];
    const [outerTwice, outerVars] = [this.twice, this.vars];
    this.functions = new Map();
    this.functionNames = new Set();
    this.unsetFunctions = new Set();
    this.twice = new EvaluatedTwice();
    this.vars = { found: this.found, twice: this.twice };
    try {
      if (!this.parsed(tree, text)) return;
      definitions(this.unbash, tree, this.functionNames, this.unsetFunctions, this.decodeWord);
      this.visit(tree, placeAt(text, depth, { from: 0, to: text.length }, true, true, undefined));
      this.found.unresolved.push(...this.twice.finish());
      if (depth > 0) this.twice.carryInto(outerTwice);
    } finally {
      this.functions = outer;
      [this.functionNames, this.unsetFunctions] = [outerNames, outerUnset];
      [this.twice, this.vars] = [outerTwice, outerVars];
    }
  }

  /** False (and why, in unresolved) when the parser reported a syntax error in the script. */
  private parsed(script: ParsedScript | undefined, source: string): boolean {
    if (script === undefined) {
      this.found.unresolved.push("a substitution in it could not be parsed");
      return false;
    }
    const error = script.errors?.[0];
    if (error === undefined) return true;
    this.found.unresolved.push(
      `bash would stop at a syntax error (${error.message}, near \`${clip((script.source ?? source).slice(error.pos, error.pos + 20))}\`)`,
    );
    return false;
  }

  private visit(node: SyntaxNode, place: Place): void {
    noteEvaluatedTwice(this.twice, node, place.twice, this.decodeWord);
    switch (node.type) {
      case "Command":
        this.command(node, place);
        return;
      case "Function":
        if (place.always && place.scope !== undefined) this.define(node.name.value, node.end, place.scope);
        this.visitChildren(node, inBody(place, node));
        return;
      case "Subshell":
        this.visitChildren(node, scoped(place, { from: node.pos, to: node.end }));
        return;
      case "CommandExpansion":
      case "ProcessSubstitution":
      case "ArithmeticCommandExpansion": {
        const script = node.script;
        if (!this.parsed(script, place.source)) return;
        // Backquotes with escapes are parsed from their own unescaped text: positions index that text.
        const source = script?.source ?? place.source;
        const scope = script?.source === undefined ? { from: node.pos, to: node.end } : undefined;
        if (node.type === "ArithmeticCommandExpansion") this.found.reevaluates = true;
        this.visitChildren(node, placeAt(source, place.depth, scope, true, true, place.body));
        return;
      }
      case "Coproc":
        // `coproc NAME …` assigns the array NAME (and NAME_PID).
        {
          const name = node.name;
          if (name !== undefined) assigns(this.vars, this.decode(name), () => `\`coproc ${name.text}\``);
        }
        break;
      case "For":
      case "Select":
        assigns(
          this.vars,
          this.decode(node.name),
          () => `\`${node.type === "For" ? "for" : "select"} ${node.name.text}\``,
          node.type === "Select",
        );
        this.visitChildren(node, unsure(place, false));
        return;
      case "If":
      case "While":
      case "Case":
        this.visitChildren(node, unsure(place, false));
        return;
      case "ArithmeticFor":
      case "ArithmeticCommand":
      case "ArithmeticExpansion":
      case "TestCommand":
        this.found.reevaluates = true;
        if (node.type !== "TestCommand") arithmetic(this.vars, place.source.slice(node.pos, node.end));
        if (plainArithmetic(node)) return;
        this.visitChildren(node, unsure(place, node.type !== "ArithmeticFor"));
        return;
      case "AndOr":
        for (const [index, command] of node.commands.entries())
          this.visit(command, unsure(place, index === 0));
        return;
      case "Pipeline":
        if (node.commands.length > 1) {
          const part = placeAt(place.source, place.depth, undefined, false, false, place.body);
          for (const command of node.commands) this.visit(command, part);
          return;
        }
        break;
      case "ParameterExpansion":
        if (node.prefix === "!" || node.index !== undefined) this.found.reevaluates = true;
        if (node.operation?.type === "Transform" && /P/.test(node.operation.operand.value))
          this.found.reevaluates = true;
        if (node.operation?.type === "Default" && node.operation.operator.endsWith("="))
          assigns(
            this.vars,
            node.prefix === undefined ? node.parameter : undefined,
            () => `\`${clip(node.text)}\``,
          );
        break;
      case "Assignment":
        setsVariable(this.found, node.name, "it");
        if (node.index !== undefined) this.found.reevaluates = true;
        break;
      case "Redirect":
        this.redirect(node);
        break;
      case "HereDocBody":
        if (hasSubstitutionText(node.text)) this.found.literalSubstitution = true;
        break;
      case "Literal":
      case "SingleQuoted":
      case "AnsiCQuoted":
        if (hasSubstitutionText(node.value)) this.found.literalSubstitution = true;
        break;
    }
    this.visitChildren(node, place);
  }

  private visitChildren(node: SyntaxNode, place: Place): void {
    const outer = this.childPlace;
    this.childPlace = place;
    this.unbash.forEachChild(node, this.visitChild);
    this.childPlace = outer;
  }

  /** A function defined where it always runs: ending at `end`, lasting in `scope`. */
  private define(name: string, end: number, scope: { from: number; to: number }): void {
    const defined = { end, ...scope };
    const same = this.functions.get(name);
    if (same === undefined) this.functions.set(name, [defined]);
    else same.push(defined);
  }

  /** True when `name`, called at `at`, runs the function the script defines (always, before, in scope, not unset). */
  private defines(name: string, at: number): boolean {
    if (this.unsetFunctions.size > 0 && (this.unsetFunctions.has(name) || this.unsetFunctions.has("*")))
      return false;
    const defined = this.functions.get(name);
    return defined?.some((one) => one.end <= at && at >= one.from && at < one.to) === true;
  }

  /** What a builtin runs as shell text (`compgen -C`, `mapfile -C`, `fc -e`, `bind -x`), and the functions it calls. */
  private runText(runs: RunsText, depth: number, at: number): void {
    this.found.unresolved.push(...runs.unresolved);
    for (const script of runs.scripts) this.script(script, depth + 1);
    for (const words of runs.words) {
      // Expanded as the words of a command: walked as the arguments of `:`, which itself runs nothing.
      const first = this.found.commands.length;
      this.script(`: ${words}`, depth + 1);
      const colon = this.found.commands[first];
      if (colon?.words[0] === ":") this.found.commands[first] = { ...colon, transparent: true };
    }
    for (const [name, why] of runs.functions) if (!this.defines(name, at)) this.found.unresolved.push(why);
  }

  private redirect(node: Redirect): void {
    // `{name}>file` assigns the descriptor's number to `name`.
    const descriptor = node.descriptor;
    if (descriptor?.type === "FileDescriptorVariable")
      assigns(this.vars, descriptor.name, () => `the redirection \`{${descriptor.name}}\``);
    if (!WRITING_REDIRECTS.has(node.operator) || node.target === undefined) return;
    // `>&2` duplicates a descriptor and `>&-` closes one; `>&file` writes stdout and stderr to a file.
    if (node.operator === ">&" && /^(\d+|-)$/.test(node.target.text)) return;
    // `> >(…)` writes to a process substitution, no file: the commands in it are walked as commands.
    if (node.target.parts?.length === 1 && node.target.parts[0]?.type === "ProcessSubstitution") return;
    this.write(this.decode(node.target), node.target.text);
  }

  /** A file written: its path, or undefined when only known at run time. */
  private write(path: string | undefined, text: string): void {
    if (path === undefined) {
      this.found.writes.push({ path: undefined, relative: false, text });
      return;
    }
    if (NOT_A_FILE.test(path)) return;
    this.found.writes.push({ path, relative: !path.startsWith("/"), text });
  }

  private command(node: Command, place: Place): void {
    const text = place.source.slice(node.pos, node.end);
    if (node.name !== undefined) {
      const words: (string | undefined)[] = [this.decode(node.name)];
      // An assignment given as a word names its variable even when its value is only known at run time.
      const names: (string | undefined)[] = [undefined];
      for (const word of node.args) {
        const assignment = word.type === "Assignment";
        words.push(assignment ? this.assignmentWord(word) : this.decode(word));
        names.push(assignment ? word.name : undefined);
      }
      noteEvaluatingCommand(this.twice, words, names, node.pos, place.twice);
      this.run(words, false, text, node.pos, place.depth, 0, stdinOf(node), names);
    }
    this.visitChildren(node, place);
  }

  /** An assignment given as an argument (`declare x=1`), as the word bash passes. */
  private assignmentWord(node: Assignment): string | undefined {
    if (node.index !== undefined || node.value.type === "ArrayValue") return undefined;
    const value = this.decode(node.value);
    return value === undefined ? undefined : `${node.name}${node.append === true ? "+=" : "="}${value}`;
  }

  /**
   * Records one command that runs and what it runs in turn: a function it calls, the text a shell or `eval` runs,
   * the command a wrapper runs.
   */
  run(
    words: readonly (string | undefined)[],
    more: boolean,
    text: string,
    at: number,
    depth: number,
    wrappers: number,
    stdin: string | undefined | null,
    names: readonly (string | undefined)[] = [],
  ): void {
    const name = words[0];
    if (name === undefined) {
      this.found.unresolved.push(`the command name in \`${clip(text)}\` is only known when it runs`);
      return;
    }
    const program = programName(name);
    if (name.includes("/")) this.found.executed.push({ path: name, command: this.found.commands.length });
    if (program === "cd" || program === "pushd" || program === "popd") this.found.changesDirectory = true;
    // printf reads a variable name only after `-v`; its other arguments are printed, never evaluated.
    if (
      REEVALUATING_BUILTINS.has(program) &&
      (program !== "printf" || words[1] === undefined || words[1].startsWith("-v"))
    )
      this.found.reevaluates = true;
    const isFunction = wrappers === 0 && this.defines(name, at);
    if (!isFunction && this.functionNames.has(name))
      this.found.unresolved.push(
        `\`${name}\` may run the function the command defines ${this.unsetFunctions.has(name) ? "and unsets" : "only under a condition"}, or a program of that name`,
      );
    const args = words.slice(1);
    const inner = isFunction ? { kind: "none" as const } : unwrapCommand(program, args, more);
    this.found.commands.push({
      words,
      more,
      text,
      transparent:
        isFunction || onlyDeclares(program, words, names) || (inner.kind !== "none" && inner.transparent),
    });
    if (isFunction) return;
    assignedBy(this.vars, program, words, names, text);
    const runs = textRunBy(program, args);
    if (runs !== undefined) this.runText(runs, depth, at);
    if (SHELLS.has(program)) noteShellStart(this.found, args, this.options.homeDir, text, stdin);
    if (wrappers > MAX_WRAPPERS) {
      this.found.unresolved.push(`it stacks more than ${MAX_WRAPPERS} wrapper commands`);
      return;
    }
    switch (inner.kind) {
      case "none":
        break;
      case "unresolved":
        this.found.unresolved.push(`\`${clip(text)}\`: ${inner.why}`);
        break;
      case "command":
        for (const assignment of inner.assignments) setsVariable(this.found, assignment, "it");
        for (const write of inner.writes) this.write(write, text);
        if (inner.words.length > 0)
          this.run(inner.words, inner.more, spelled(inner.words, inner.more), at, depth, wrappers + 1, stdin);
        break;
      case "commands":
        for (const write of inner.writes) this.write(write, text);
        for (const command of inner.commands)
          this.run(
            command.words,
            command.more,
            spelled(command.words, command.more),
            at,
            depth,
            wrappers + 1,
            null,
          );
        break;
      case "script":
        for (const write of inner.writes) this.write(write, text);
        if (inner.text !== undefined) this.script(inner.text, depth + 1);
        else if (inner.file !== undefined) {
          if (readsInput(inner.file))
            this.found.unresolved.push(
              `\`${clip(text)}\` runs commands from its input, which is not checked`,
            );
          else this.found.executed.push({ path: inner.file, command: this.found.commands.length - 1 });
        } else if (typeof stdin === "string") this.script(stdin, depth + 1);
        else
          this.found.unresolved.push(`\`${clip(text)}\` runs commands from its input, which is not checked`);
        break;
      case "scripts":
        for (const part of inner.texts) {
          if (part === undefined)
            this.found.unresolved.push(`\`${clip(text)}\` runs text that is only known when it runs`);
          else this.script(part, depth + 1);
        }
        break;
      case "writes":
        for (const target of inner.targets) this.write(target, text);
        break;
    }
  }

  /** A word's value after expansion, or undefined when bash would expand something only known when it runs. */
  decode(word: Word): string | undefined {
    let value: string;
    if (word.parts === undefined) value = word.value;
    else {
      value = "";
      for (const part of word.parts) {
        const piece = partValue(part);
        if (piece === undefined) return undefined;
        value += piece;
      }
    }
    if (hasSubstitutionText(value)) this.found.literalSubstitution = true;
    // `~` and `~/…` unquoted at the start are the home folder; `~user`, `~+`, `~-` are not known here.
    if (word.text.startsWith("~")) {
      const slash = value.indexOf("/");
      if ((slash === -1 ? value : value.slice(0, slash)) !== "~") return undefined;
      return this.options.homeDir + (slash === -1 ? "" : value.slice(slash));
    }
    // zsh expands `=name` to the program's path.
    if (word.text.startsWith("=") && /^=[\w.-]/.test(word.text)) return undefined;
    return value;
  }
}
