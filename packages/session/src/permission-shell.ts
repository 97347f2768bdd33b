import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { posix } from "node:path";
import type { Parser, Node as SyntaxNode } from "web-tree-sitter";
import { unwrapCommand } from "./permission-wrappers.ts";

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
}

/**
 * How many times text may be parsed again inside itself (`bash -c "bash -c '…'"`, `eval`, `trap`, an alias body)
 * and how many wrappers may stack (`nice nohup timeout 9 …`). No real command comes near either; past them the
 * command is unresolved rather than partly checked.
 */
const MAX_NESTING = 8;
const MAX_WRAPPERS = 32;

/** Variables that make bash or the programs it starts run code or load files not in the command. */
const CODE_VARIABLES = new Set([
  "PATH",
  "BASH_ENV",
  "ENV",
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
]);
const isCodeVariable = (name: string) =>
  CODE_VARIABLES.has(name) || /^(BASH_FUNC_|GIT_CONFIG_(KEY|VALUE)_)/.test(name);

/** Builtins that read text as arithmetic or as a variable name, where bash may expand `a[$(…)]` a second time. */
const REEVALUATING_BUILTINS = new Set([
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
const NOT_A_FILE = /^\/dev\/(null|stdout|stderr|tty|zero|full|fd\/\d+)$|^\/proc\/self\/fd\/\d+$/;

/** Reserved words: read as a command's name, they mean the grammar misread a compound command. */
const KEYWORDS = new Set([
  "if",
  "then",
  "elif",
  "else",
  "fi",
  "for",
  "while",
  "until",
  "do",
  "done",
  "case",
  "esac",
  "select",
  "function",
  "{",
  "}",
  "[[",
  "]]",
  "!",
  "in",
]);

/** Where a function defined unconditionally lasts: the script, or the subshell it is defined in. */
const SCOPES = new Set(["program", "subshell", "command_substitution", "process_substitution"]);

/** A script path that is the command's own input rather than a file. */
const READS_INPUT = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/self\/fd\/\d+)$/;

/** Redirection operators that open their destination for writing. */
const WRITING_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>", ">&", "<>"]);

let loading: Promise<Parser> | undefined;

/**
 * A file of an installed package, resolved from this module, or from this package's own entry when this module is
 * bundled into an app (the app depends on @unforget/session, whose dependencies are installed beside it).
 */
function packageFile(specifier: string): string {
  const here = createRequire(import.meta.url);
  const bases: string[] = [];
  try {
    bases.push(here.resolve("@unforget/session"));
  } catch {
    // Not installed as a package (a test run from the sources): resolving from here is enough.
  }
  for (const base of [import.meta.url, ...bases]) {
    try {
      return createRequire(base).resolve(specifier);
    } catch {
      // Try the next place.
    }
  }
  throw new Error(`${specifier} is not installed beside @unforget/session; reinstall it`);
}

/**
 * The bash grammar, loaded once per process: web-tree-sitter's runtime and tree-sitter-bash's grammar, both
 * WebAssembly, read from the installed packages. A failure is not kept: the next command tries again.
 */
function bashParser(): Promise<Parser> {
  loading ??= (async () => {
    const [{ Language, Parser }, runtime, grammar] = await Promise.all([
      import("web-tree-sitter"),
      readFile(packageFile("web-tree-sitter/web-tree-sitter.wasm")),
      readFile(packageFile("tree-sitter-bash/tree-sitter-bash.wasm")),
    ]);
    await Parser.init({ wasmBinary: runtime });
    const parser = new Parser();
    parser.setLanguage(await Language.load(grammar));
    return parser;
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

interface Found {
  commands: ShellCommand[];
  writes: ShellWrite[];
  unresolved: string[];
  /** Paths run as programs or scripts (`./x`, `bash x`, `source x`), as written. */
  executed: string[];
  /** The command changes the shell's directory somewhere (`cd`, `pushd`, `popd`). */
  changesDirectory: boolean;
  /** Some part makes bash evaluate text again (arithmetic, subscripts, `${!x}`, `${x@P}`, …). */
  reevaluates: boolean;
  /** Some literal text contains `$(` or a backquote. */
  literalSubstitution: boolean;
}

/** Reads one command the way bash will run it. Never rejects: what cannot be read is in `unresolved`. */
export async function analyzeShellCommand(
  command: string,
  options: ShellAnalysisOptions,
): Promise<ShellAnalysis> {
  const found: Found = {
    commands: [],
    writes: [],
    unresolved: [],
    executed: [],
    changesDirectory: false,
    reevaluates: false,
    literalSubstitution: false,
  };
  let parser: Parser;
  try {
    parser = await bashParser();
  } catch (error) {
    found.unresolved.push(
      `the shell parser could not be loaded (${(error as Error).message}), so no part of the command can be checked`,
    );
    return found;
  }
  try {
    new Walk(parser, options, found).script(command, 0);
  } catch (error) {
    // Deep nesting can exhaust the stack; whatever the cause, the command is not resolved.
    found.unresolved.push(`the command could not be analysed (${(error as Error).message})`);
  }
  return finish(found);
}

/** Checks that need the whole command: written files that are then run, `cd` before a relative write, re-evaluation. */
function finish(found: Found): ShellAnalysis {
  const normal = (path: string) => posix.normalize(path).replace(/^\.\//, "");
  const written = new Set(
    found.writes.flatMap((write) => (write.path === undefined ? [] : [normal(write.path)])),
  );
  for (const path of found.executed)
    if (written.has(normal(path)))
      found.unresolved.push(
        `it runs \`${path}\`, a file the same command writes, whose content is not checked`,
      );
  const writes = found.writes.map((write) => {
    if (write.path === undefined || !write.relative) return write;
    if (found.changesDirectory || write.path.split("/").includes("..")) return { ...write, path: undefined };
    return write;
  });
  if (found.reevaluates && found.literalSubstitution)
    found.unresolved.push(
      "bash evaluates some of its text a second time (arithmetic, an array subscript or a variable name), and a literal in it holds `$(` or a backquote that would then run",
    );
  return { commands: found.commands, writes, unresolved: found.unresolved };
}

interface Decoded {
  value: string;
  /** The unquoted characters of the word, with quoted or escaped ones replaced by NUL: where globs and braces act. */
  pattern: string;
}

class Walk {
  /**
   * Functions the script being walked defines unconditionally (not inside `if`, `&&`, a loop or another function),
   * with where each definition ends and the subshell (or script) it lasts in.
   */
  private functions: { name: string; end: number; from: number; to: number }[] = [];
  /** Every function name the script being walked defines, wherever. */
  private functionNames = new Set<string>();

  private readonly parser: Parser;
  private readonly options: ShellAnalysisOptions;
  private readonly found: Found;

  constructor(parser: Parser, options: ShellAnalysisOptions, found: Found) {
    this.parser = parser;
    this.options = options;
    this.found = found;
  }

  /** Parses `text` (the command, or text it runs: `bash -c`, `eval`, …) and walks it. */
  script(text: string, depth: number): void {
    if (depth > MAX_NESTING) {
      this.found.unresolved.push(`it nests commands in strings more than ${MAX_NESTING} levels deep`);
      return;
    }
    if (text.includes("\r")) {
      this.found.unresolved.push("it contains a carriage return, which bash reads as part of a word");
      return;
    }
    const tree = this.parser.parse(text);
    const outer = this.functions;
    const outerNames = this.functionNames;
    this.functions = [];
    this.functionNames = new Set(
      tree?.rootNode
        .descendantsOfType("function_definition")
        .flatMap((node) => node?.childForFieldName("name")?.text ?? []) ?? [],
    );
    if (tree === null) {
      this.found.unresolved.push("the shell parser returned nothing for it");
      return;
    }
    try {
      const root = tree.rootNode;
      if (root.hasError) {
        const error = firstError(root);
        this.found.unresolved.push(
          `bash may read it differently from the gate's parser (a syntax error${error === undefined ? "" : ` near \`${clip(error.text)}\``})`,
        );
        return;
      }
      if (splitsAtContinuation(text, root)) {
        this.found.unresolved.push(
          "a backslash-newline joins two words into one, which the gate's parser reads as two",
        );
        return;
      }
      const glued = gluedToken(root);
      if (glued !== undefined) {
        this.found.unresolved.push(
          `the gate's parser read \`${clip(glued)}\` as one word, where bash splits it at a blank or a newline`,
        );
        return;
      }
      this.visit(root, depth);
    } finally {
      tree.delete();
      this.functions = outer;
      this.functionNames = outerNames;
    }
  }

  private visit(node: SyntaxNode, depth: number): void {
    switch (node.type) {
      case "command":
        this.command(node, depth);
        return;
      case "declaration_command":
      case "unset_command":
        this.builtinStatement(node, depth);
        return;
      case "function_definition": {
        const name = node.childForFieldName("name");
        let scope = node.parent;
        while (scope?.type === "compound_statement") scope = scope.parent;
        if (name !== null && scope !== null && SCOPES.has(scope.type))
          this.functions.push({
            name: name.text,
            end: node.endIndex,
            from: scope.startIndex,
            to: scope.endIndex,
          });
        break;
      }
      case "variable_assignment":
        this.assignment(node);
        break;
      case "file_redirect":
        this.redirect(node);
        break;
      case "arithmetic_expansion":
      case "c_style_for_statement":
      case "subscript":
      case "test_command":
        this.found.reevaluates = true;
        break;
      case "compound_statement":
        if (node.child(0)?.type === "((") this.found.reevaluates = true;
        break;
      case "expansion":
        if (node.children.some((child) => child.type === "!" || child.type === "P"))
          this.found.reevaluates = true;
        break;
      case "command_substitution":
        // Inside backquotes bash unescapes \\ \` and \$ before it parses the text (`\`rm x\`` nests a substitution);
        // the grammar does not, so the text is parsed again.
        if (node.child(0)?.type === "`" && node.text.includes("\\")) {
          this.found.literalSubstitution = true;
          this.script(node.text.slice(1, -1).replace(/\\([\\`$])/g, "$1"), depth + 1);
          return;
        }
        break;
      case "heredoc_body":
        this.heredoc(node);
        break;
      case "raw_string":
      case "string_content":
      case "ansi_c_string":
      case "heredoc_content":
      case "word":
        if (/\$\(|`/.test(node.text)) this.found.literalSubstitution = true;
        break;
    }
    for (const child of node.namedChildren) if (child !== null) this.visit(child, depth);
  }

  /**
   * An unquoted here-document is expanded like a double-quoted string. The grammar misses some of its expansions
   * (a backquote, a line indented with a tab): every `$(`, `${`, `$[` and backquote must be inside one it read.
   */
  private heredoc(node: SyntaxNode): void {
    if (this.found.literalSubstitution === false && /\$\(|`/.test(node.text))
      this.found.literalSubstitution = true;
    const start = node.parent?.children.find((child) => child?.type === "heredoc_start")?.text ?? "";
    if (/['"\\]/.test(start)) return;
    const read = node.namedChildren
      .filter((child) => child !== null && child.type !== "heredoc_content")
      .map((child) => [child!.startIndex - node.startIndex, child!.endIndex - node.startIndex] as const);
    const text = node.text;
    const trigger = /\\[\s\S]|\$[({[]|`/g;
    for (let match = trigger.exec(text); match !== null; match = trigger.exec(text)) {
      if (match[0].startsWith("\\")) continue;
      if (!read.some(([from, to]) => match.index >= from && match.index < to)) {
        this.found.unresolved.push(
          `a here-document expands \`${clip(text.slice(match.index, match.index + 20))}\`, which the gate's parser did not read`,
        );
        return;
      }
    }
  }

  private assignment(node: SyntaxNode): void {
    const name = node.childForFieldName("name");
    const variable = name?.type === "subscript" ? name.namedChild(0)?.text : name?.text;
    if (variable !== undefined && isCodeVariable(variable))
      this.found.unresolved.push(
        `it sets ${variable}, which makes bash or the programs it starts run code the command does not show`,
      );
  }

  private redirect(node: SyntaxNode): void {
    const operator = node.children.find((child) => child !== null && !child.isNamed)?.type ?? "";
    const destination = redirectTargets(node)[0];
    if (destination === undefined || !WRITING_REDIRECTS.has(operator)) return;
    if (operator === ">&") {
      // `>&2` duplicates a descriptor; `>&file` writes stdout and stderr to a file.
      if (destination.type === "number" || destination.text === "-") return;
    }
    this.write(destination);
  }

  /** A file written: a redirection's destination (a node), or a wrapper's or tee's argument (a word or undefined). */
  private write(target: SyntaxNode | string | undefined, text?: string): void {
    const path = typeof target === "object" ? this.decode(target) : target;
    const written = typeof target === "object" ? target.text : (target ?? text ?? "");
    if (path === undefined) {
      this.found.writes.push({ path: undefined, relative: false, text: written });
      return;
    }
    if (NOT_A_FILE.test(path)) return;
    this.found.writes.push({ path, relative: !path.startsWith("/"), text: written });
  }

  /** `declare`, `export`, `local`, `readonly`, `typeset`, `unset`: builtins the grammar reads as statements. */
  private builtinStatement(node: SyntaxNode, depth: number): void {
    const keyword = node.child(0)?.text ?? "";
    const words: (string | undefined)[] = [keyword];
    for (const child of node.namedChildren) {
      if (child === null) continue;
      if (child.type === "variable_assignment") {
        const name = child.childForFieldName("name")?.text ?? "";
        const value = child.childForFieldName("value");
        const decoded = value === null ? "" : this.decode(value);
        words.push(decoded === undefined ? undefined : `${name}=${decoded}`);
      } else words.push(child.type === "variable_name" ? child.text : this.decode(child));
    }
    this.found.reevaluates = true;
    this.run(words, false, node.text, node.startIndex, depth, 0, undefined);
    for (const child of node.namedChildren) if (child !== null) this.visit(child, depth);
  }

  private command(node: SyntaxNode, depth: number): void {
    // Words in source order: the name, the arguments, and the words the grammar files under a redirection that
    // follows the command (`git >/dev/null push` runs `git push`).
    const pieces: SyntaxNode[] = [];
    const parent = node.parent;
    const redirects = [
      ...node.childrenForFieldName("redirect"),
      ...(parent?.type === "redirected_statement" && parent.childForFieldName("body")?.id === node.id
        ? parent.childrenForFieldName("redirect")
        : []),
    ];
    for (const child of node.namedChildren) {
      if (child === null) continue;
      if (child.type === "command_name") pieces.push(child.namedChild(0) ?? child);
      else if (
        child.type !== "variable_assignment" &&
        child.type !== "file_redirect" &&
        child.type !== "herestring_redirect" &&
        child.type !== "comment"
      )
        pieces.push(child);
    }
    for (const redirect of redirects)
      if (redirect?.type === "file_redirect")
        pieces.push(...redirectTargets(redirect).slice(isClosing(redirect) ? 0 : 1));
    pieces.sort((a, b) => a.startIndex - b.startIndex);
    const words = pieces.map((piece) => this.decode(piece));
    if (words.length > 0)
      this.run(words, false, node.text, node.startIndex, depth, 0, stdinScript(node, parent));
    for (const child of node.namedChildren) if (child !== null) this.visit(child, depth);
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
  ): void {
    const name = words[0];
    if (name === undefined) {
      this.found.unresolved.push(`the command name in \`${clip(text)}\` is only known when it runs`);
      return;
    }
    if (KEYWORDS.has(name)) {
      this.found.unresolved.push(
        `the gate's parser read the keyword \`${name}\` in \`${clip(text)}\` as a command`,
      );
      return;
    }
    const program = programName(name);
    if (name.includes("/")) this.found.executed.push(name);
    if (program === "cd" || program === "pushd" || program === "popd") this.found.changesDirectory = true;
    if (REEVALUATING_BUILTINS.has(program)) this.found.reevaluates = true;
    const isFunction = this.functions.some(
      (defined) => defined.name === name && defined.end <= at && at >= defined.from && at < defined.to,
    );
    if (!isFunction && this.functionNames.has(name))
      this.found.unresolved.push(
        `\`${name}\` may run the function the command defines only under a condition, or a program of that name`,
      );
    const inner = isFunction ? { kind: "none" as const } : unwrapCommand(program, words.slice(1), more);
    this.found.commands.push({
      words,
      more,
      text,
      transparent: isFunction || (inner.kind !== "none" && inner.transparent),
    });
    if (isFunction) return;
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
        for (const assignment of inner.assignments)
          if (isCodeVariable(assignment))
            this.found.unresolved.push(
              `it sets ${assignment}, which makes bash or the programs it starts run code the command does not show`,
            );
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
          if (READS_INPUT.test(inner.file))
            this.found.unresolved.push(
              `\`${clip(text)}\` runs commands from its input, which is not checked`,
            );
          else this.found.executed.push(inner.file);
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

  /** A word's value after expansion, or undefined when bash would expand something not known until it runs. */
  decode(node: SyntaxNode): string | undefined {
    const decoded = this.decodePart(node);
    if (decoded === undefined) return undefined;
    if (/\$\(|`/.test(decoded.value)) this.found.literalSubstitution = true;
    const { pattern } = decoded;
    // Pathname expansion (`*`, `?`, `[…]`, extglob) and brace expansion make the words depend on the disk or
    // split one word into several.
    if (/[*?]|\[[^\]]*\]|[+@!]\(/.test(pattern)) return undefined;
    if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(pattern)) return undefined;
    // zsh expands `=name` to the program's path.
    if (/^=[\w.-]/.test(pattern)) return undefined;
    if (pattern.startsWith("~")) {
      const slash = decoded.value.indexOf("/");
      const user = slash === -1 ? decoded.value.slice(1) : decoded.value.slice(1, slash);
      if (
        user !== "" ||
        !pattern
          .slice(0, slash === -1 ? undefined : slash)
          .split("")
          .every((c) => c === "~")
      )
        return undefined;
      return this.options.homeDir + (slash === -1 ? "" : decoded.value.slice(slash));
    }
    return decoded.value;
  }

  private decodePart(node: SyntaxNode): Decoded | undefined {
    switch (node.type) {
      case "word":
      case "number":
      case "extglob_pattern":
        return unquoted(node.text);
      case "raw_string": {
        const value = node.text.slice(1, -1);
        return { value, pattern: "\0".repeat(value.length) };
      }
      case "ansi_c_string": {
        const value = ansiC(node.text.slice(2, -1));
        return value === undefined ? undefined : { value, pattern: "\0".repeat(value.length) };
      }
      case "string": {
        // `"…"`: its content, with `\$ \` \" \\` and backslash-newline unescaped; a `$` is literal only last.
        const inner = node.children.slice(1, -1);
        let value = "";
        for (const [index, child] of inner.entries()) {
          if (child === null) return undefined;
          if (child.type === "string_content")
            value += child.text.replace(/\\([$`"\\\n])/g, (_, escaped: string) =>
              escaped === "\n" ? "" : escaped,
            );
          else if (child.type === "$" && index === inner.length - 1) value += "$";
          else return undefined;
        }
        if (!tiles(node)) return undefined;
        return { value, pattern: "\0".repeat(value.length) };
      }
      case "concatenation": {
        let value = "";
        let pattern = "";
        const children = node.children;
        for (const [index, child] of children.entries()) {
          if (child === null) return undefined;
          if (!child.isNamed) {
            // The grammar splits `a$` and `r$"x"m` around a bare `$`: bash keeps it only when nothing follows.
            if (child.type !== "$" || index !== children.length - 1) return undefined;
            value += "$";
            pattern += "$";
            continue;
          }
          const part = this.decodePart(child);
          if (part === undefined) return undefined;
          value += part.value;
          pattern += part.pattern;
        }
        if (!tiles(node)) return undefined;
        return { value, pattern };
      }
      default:
        // Expansions, substitutions, `$"…"` (a translation, whose text could change), arrays, …
        return undefined;
    }
  }
}

/** True when a node's children cover its text without gaps (the grammar skipped nothing bash would read). */
function tiles(node: SyntaxNode): boolean {
  let at = node.startIndex;
  for (const child of node.children) {
    if (child === null || child.startIndex !== at) return false;
    at = child.endIndex;
  }
  return at === node.endIndex;
}

/** An unquoted word: backslash escapes removed, a backslash-newline joins. */
function unquoted(text: string): Decoded {
  let value = "";
  let pattern = "";
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === "\\" && index + 1 < text.length) {
      const next = text[++index]!;
      if (next === "\n") continue;
      value += next;
      pattern += "\0";
      continue;
    }
    value += char;
    pattern += char;
  }
  return { value, pattern };
}

/** bash's `$'…'` escapes; undefined for one the gate does not decode. */
function ansiC(body: string): string | undefined {
  const simple: Record<string, string> = {
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    n: "\n",
    r: "\r",
    t: "\t",
    v: "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
  };
  let value = "";
  for (let index = 0; index < body.length; index++) {
    const char = body[index]!;
    if (char !== "\\") {
      value += char;
      continue;
    }
    const next = body[index + 1];
    if (next === undefined) return undefined;
    index++;
    let code: number | undefined;
    if (next in simple) {
      value += simple[next];
      continue;
    }
    const digits = (pattern: RegExp, max: number) => {
      const match = pattern.exec(body.slice(index + 1, index + 1 + max));
      return match?.[0] ?? "";
    };
    if (/[0-7]/.test(next)) {
      const more = digits(/^[0-7]+/, 2);
      code = Number.parseInt(next + more, 8) & 0xff;
      index += more.length;
    } else if (next === "x" || next === "u" || next === "U") {
      const hex = digits(/^[0-9a-fA-F]+/, next === "x" ? 2 : next === "u" ? 4 : 8);
      if (hex === "") {
        value += `\\${next}`;
        continue;
      }
      code = Number.parseInt(hex, 16);
      index += hex.length;
    } else if (next === "c") {
      const control = body[index + 1];
      if (control === undefined) return undefined;
      index++;
      code = control === "?" ? 0x7f : control.toUpperCase().charCodeAt(0) & 0x1f;
    } else {
      value += `\\${next}`;
      continue;
    }
    // A NUL ends the string for bash.
    if (code === 0) return value;
    if (code > 0x10ffff) return undefined;
    value += String.fromCodePoint(code);
  }
  return value;
}

/** The program a command name runs: the name itself, or the last part of a path. */
export function programName(name: string): string {
  const trimmed = name.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/** The named children of a redirection that are words (the first is its destination). */
function redirectTargets(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter(
    (child): child is SyntaxNode =>
      child !== null && child.type !== "file_descriptor" && child.type !== "comment",
  );
}

/** `>&-` and `<&-` close a descriptor and take no destination. */
function isClosing(node: SyntaxNode): boolean {
  return node.children.some((child) => child !== null && (child.type === ">&-" || child.type === "<&-"));
}

/**
 * The text a command reads on its input when it is written in the command: a here-string or a here-document
 * without expansions. `null` when there is none, undefined when there is one but its text is only known at run time.
 */
function stdinScript(node: SyntaxNode, parent: SyntaxNode | null): string | undefined | null {
  // `! bash <<EOF`: the here-document belongs to the negated command.
  let outer = parent;
  while (outer?.type === "negated_command") outer = outer.parent;
  const redirects = [
    ...node.namedChildren,
    ...(outer?.type === "redirected_statement" ? outer.namedChildren : []),
  ];
  for (const redirect of redirects) {
    if (redirect?.type === "heredoc_redirect") {
      const body = redirect.namedChildren.find((child) => child?.type === "heredoc_body");
      if (body === undefined || body === null) return "";
      if (body.namedChildren.some((child) => child !== null && child.type !== "heredoc_content"))
        return undefined;
      const strip = redirect.children.some((child) => child?.type === "<<-");
      return strip ? body.text.replace(/^\t+/gm, "") : body.text;
    }
    if (redirect?.type === "herestring_redirect") {
      const word = redirect.namedChildren.find((child) => child !== null && child.type !== "file_descriptor");
      if (word === undefined || word === null) return undefined;
      const walkless = literalText(word);
      return walkless;
    }
  }
  return null;
}

/** The value of a word with no expansions (quotes removed), for here-strings. */
function literalText(node: SyntaxNode): string | undefined {
  if (node.type === "raw_string") return node.text.slice(1, -1);
  if (node.type === "word") return unquoted(node.text).value;
  if (node.type === "string" && node.namedChildren.every((child) => child?.type === "string_content"))
    return node.namedChildren.map((child) => child?.text ?? "").join("");
  return undefined;
}

/**
 * True when a backslash-newline sits between two non-blank characters outside quotes: bash joins the two into one
 * word (`r\⏎m` is `rm`), while the grammar reads two.
 */
function splitsAtContinuation(text: string, root: SyntaxNode): boolean {
  const blank = /[\s;&|()<>]/;
  for (let index = text.indexOf("\\\n"); index !== -1; index = text.indexOf("\\\n", index + 2)) {
    let backslashes = 0;
    for (let at = index; at >= 0 && text[at] === "\\"; at--) backslashes++;
    if (backslashes % 2 === 0) continue;
    const leaf = root.descendantForIndex(index, index + 1);
    if (
      leaf !== null &&
      [
        "raw_string",
        "string_content",
        "string",
        "comment",
        "heredoc_body",
        "heredoc_content",
        "ansi_c_string",
      ].includes(leaf.type)
    )
      continue;
    const before = text[index - 1];
    const after = text[index + 2];
    if (before !== undefined && after !== undefined && !blank.test(before) && !blank.test(after)) return true;
  }
  return false;
}

/** Tokens that bash never lets hold an unquoted blank: words, names, numbers, operators of tests. */
const SINGLE_WORD_TOKENS = new Set([
  "word",
  "number",
  "extglob_pattern",
  "variable_name",
  "file_descriptor",
  "test_operator",
  "heredoc_start",
  "special_variable_name",
]);

/**
 * A token the grammar read as one word although it holds an unescaped blank or newline (the grammar reads
 * `ls⏎\rm x` as `ls` with two arguments; bash runs `ls`, then `rm x`), or a comment that runs past a line's end.
 * Walks the tree without recursion.
 */
function gluedToken(root: SyntaxNode): string | undefined {
  const cursor = root.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      if (SINGLE_WORD_TOKENS.has(type) && hasUnescapedBlank(cursor.nodeText)) return cursor.nodeText;
      if (type === "comment" && cursor.nodeText.includes("\n")) return cursor.nodeText;
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return undefined;
    }
  } finally {
    cursor.delete();
  }
}

function hasUnescapedBlank(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === "\\") index++;
    else if (char === " " || char === "\t" || char === "\n") return true;
  }
  return false;
}

function firstError(node: SyntaxNode): SyntaxNode | undefined {
  if (node.type === "ERROR" || node.isMissing) return node;
  for (const child of node.children) {
    if (child === null || !child.hasError) continue;
    const found = firstError(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A command a wrapper runs, written out from its words (`…` for a word only known at run time). */
function spelled(words: readonly (string | undefined)[], more: boolean): string {
  return [
    ...words.map((word) => (word === undefined ? "…" : /[\s'"]/.test(word) ? JSON.stringify(word) : word)),
    ...(more ? ["…"] : []),
  ].join(" ");
}

/** A command's text for a message: one line, at most 80 characters. */
export function clip(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ⏎ ");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
