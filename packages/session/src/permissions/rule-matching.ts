import type { CallFacts, ShellFacts } from "./call-facts.ts";
import type { GateState } from "./gate-state.ts";
import { type CommandPattern, commandMatches, readCommandPattern } from "./permission-command.ts";
import { isInsideDirectories, pathMatches } from "./permission-path.ts";
import type { PermissionBehavior, PermissionRule } from "./permission-rule.ts";
import type { ShellAnalyzer, ShellCommand } from "./shell/shell-analyzer.ts";
import { clip } from "./shell/shell-words.ts";

// Which rules catch a call (deny and ask rules: any part of it; allow rules: all of it), as Claude Code reads
// them: by tool name, then by the specifier, a command pattern, a path pattern or a `domain:` for URLs.

/** A rule that catches a call: for certain, or possibly (`maybe` says why it cannot be told before the call runs). */
export interface Caught {
  rule: PermissionRule;
  /** The part of a command it caught, when that is not the whole command. */
  part?: string;
  maybe?: string;
}

/** Tools Claude Code's `Edit` and `Read` rules cover besides those whose permission subject says so. */
const WRITING_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
const READING_TOOLS = new Set(["Read", "Grep", "Glob", "LS", "NotebookRead"]);

function hostMatches(specifier: string, url: string): boolean {
  if (!specifier.startsWith("domain:")) return false;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  const domain = specifier.slice("domain:".length).trim().toLowerCase();
  return domain.startsWith("*.") ? host.endsWith(domain.slice(1)) : host === domain;
}

/** Whether a rule names this tool: by name, `mcp__server` for its tools, `Edit`/`Read` for file tools. */
function namesTool(rule: PermissionRule, facts: CallFacts): boolean {
  const name = facts.tool.name;
  if (rule.toolName === name) return true;
  if (rule.toolName.startsWith("mcp__") && name.startsWith(`${rule.toolName}__`)) return true;
  const access = facts.subject?.kind === "path" ? facts.subject.access : undefined;
  if (rule.toolName === "Edit") return access === "write" || WRITING_TOOLS.has(name);
  if (rule.toolName === "Read") return access === "read" || READING_TOOLS.has(name);
  return false;
}

/** `Edit(…)` and `Write(…)` rules also cover the files a shell command writes (redirections, `tee`). */
const coversShellWrites = (rule: PermissionRule) => rule.toolName === "Edit" || rule.toolName === "Write";

/** A command rule's specifier, read once; its words are read the way commands are (quotes removed). */
function patternOf(state: GateState, specifier: string, analyze: ShellAnalyzer): CommandPattern {
  let pattern = state.patterns.get(specifier);
  if (pattern === undefined) {
    const body = (specifier.endsWith(":*") ? specifier.slice(0, -2) : specifier).trim();
    let words: string[] | undefined;
    if (!/(?<!\\)\*/.test(body)) {
      const read = analyze(body, { homeDir: state.homeDir });
      const first = read.commands[0];
      if (
        read.unresolved.length === 0 &&
        first?.text === body &&
        first.words.every((word) => word !== undefined)
      )
        words = first.words as string[];
    }
    pattern = readCommandPattern(specifier, words === undefined ? undefined : () => words);
    state.patterns.set(specifier, pattern);
  }
  return pattern;
}

/** Whether a path, in all its forms (deny and ask: any form), matches a rule's pattern. */
function pathRuleMatches(
  state: GateState,
  rule: PermissionRule,
  paths: readonly string[],
  every: boolean,
): boolean {
  return (
    rule.specifier === undefined ||
    (every ? paths.every.bind(paths) : paths.some.bind(paths))((path) =>
      pathMatches(rule.specifier!, path, rule.source.root, state.context),
    )
  );
}

/** The first rule of `behavior` that catches the call, or that may (when none does for certain). */
export function catching(
  state: GateState,
  behavior: PermissionBehavior,
  facts: CallFacts,
): { certain?: Caught; maybe?: Caught } {
  const found: { certain?: Caught; maybe?: Caught } = {};
  for (const rule of state.rules) {
    if (rule.behavior !== behavior) continue;
    const caught = catches(state, rule, facts);
    if (caught === undefined) continue;
    if (caught.maybe === undefined) {
      found.certain = caught;
      return found;
    }
    found.maybe ??= caught;
  }
  return found;
}

/** Whether one rule catches the call (or may). */
function catches(state: GateState, rule: PermissionRule, facts: CallFacts): Caught | undefined {
  const { subject, shell } = facts;
  if (shell !== undefined) {
    if (coversShellWrites(rule) && rule.toolName !== facts.tool.name)
      return catchesShellWrite(state, rule, shell);
    if (!namesTool(rule, facts)) return undefined;
    if (rule.specifier === undefined) return { rule };
    return catchesCommand(state, rule, rule.specifier, shell);
  }
  if (!namesTool(rule, facts)) return undefined;
  if (rule.specifier === undefined) return { rule };
  if (subject === undefined || subject.kind === "command") return undefined;
  if (subject.kind === "url") return hostMatches(rule.specifier, subject.url) ? { rule } : undefined;
  return pathRuleMatches(state, rule, facts.paths, false) ? { rule } : undefined;
}

/** An `Edit`/`Write` rule and the files a command writes: a write it matches, or one whose path is only known later. */
function catchesShellWrite(state: GateState, rule: PermissionRule, shell: ShellFacts): Caught | undefined {
  let maybe: Caught | undefined;
  for (const write of shell.writes) {
    if (write.paths === undefined) {
      if (rule.specifier === undefined) return { rule, part: `> ${write.text}` };
      maybe ??= {
        rule,
        part: `> ${write.text}`,
        maybe: `it writes to \`${write.text}\`, a path only known when it runs`,
      };
    } else if (pathRuleMatches(state, rule, write.paths, false)) return { rule, part: `> ${write.text}` };
  }
  return maybe;
}

/** A command rule and the simple commands a call runs: one it matches, or one that may run what it names. */
function catchesCommand(
  state: GateState,
  rule: PermissionRule,
  specifier: string,
  shell: ShellFacts,
): Caught | undefined {
  const pattern = patternOf(state, specifier, shell.analyze);
  let maybe: Caught | undefined;
  for (const command of shell.commands) {
    const match = commandMatches(pattern, command, rule.behavior);
    if (match === "yes") return { rule, part: command.text };
    if (match === "maybe")
      maybe ??= {
        rule,
        part: command.text,
        maybe: command.words.includes(undefined)
          ? `a word in \`${clip(command.text)}\` is only known when it runs`
          : `\`${clip(command.text)}\` is given ${pattern.kind === "wildcard" ? pattern.program : pattern.words[0]} as an argument, and may run it`,
      };
  }
  if (maybe === undefined && shell.unresolved.length > 0) maybe = { rule, maybe: shell.unresolved[0] };
  return maybe;
}

/** The first allow rule that covers one simple command (the whole tool, or a pattern matching the command). */
function coveringRule(
  state: GateState,
  facts: CallFacts,
  command: ShellCommand,
  analyze: ShellAnalyzer,
): PermissionRule | undefined {
  return state.rules.find(
    (rule) =>
      rule.behavior === "allow" &&
      namesTool(rule, facts) &&
      (rule.specifier === undefined ||
        commandMatches(patternOf(state, rule.specifier, analyze), command, "allow") === "yes"),
  );
}

/** Whether an allow rule covers this one simple command already. */
export function allowedAlready(
  state: GateState,
  facts: CallFacts,
  command: ShellCommand,
  analyze: ShellAnalyzer,
): boolean {
  return coveringRule(state, facts, command, analyze) !== undefined;
}

/** The text of the first command no allow rule covers, for the reason a call is asked about. */
export function firstUnallowed(state: GateState, facts: CallFacts): string | undefined {
  const shell = facts.shell;
  if (shell === undefined) return undefined;
  return shell.commands.find(
    (command) => !command.transparent && !allowedAlready(state, facts, command, shell.analyze),
  )?.text;
}

/**
 * The allow rule that covers the call, if it is covered: a path or URL by one rule (every form of a path); a
 * command when every command it runs is allowed (wrappers whose inner command is listed need not be), nothing in
 * it is unresolved (or a bare `Bash` rule allows it whatever it runs), and every file it writes is inside the
 * working directories or allowed by an `Edit`/`Write` rule.
 */
export function allowing(state: GateState, facts: CallFacts, dirs: string[]): PermissionRule | undefined {
  const allows = state.rules.filter((rule) => rule.behavior === "allow");
  const { shell } = facts;
  if (shell === undefined) return allowingSubject(state, allows, facts);
  const whole = allows.find((rule) => namesTool(rule, facts) && rule.specifier === undefined);
  let first: PermissionRule | undefined;
  for (const command of shell.commands) {
    if (command.transparent) continue;
    const covering = coveringRule(state, facts, command, shell.analyze);
    if (covering === undefined) return undefined;
    first ??= covering;
  }
  if (shell.unresolved.length > 0 || first === undefined) {
    if (whole === undefined) return undefined;
    first = whole;
  }
  return shellWritesAllowed(state, allows, shell, dirs) ? first : undefined;
}

/** The allow rule that covers a path or URL subject (every form of a path), or a tool without a subject. */
function allowingSubject(
  state: GateState,
  allows: readonly PermissionRule[],
  facts: CallFacts,
): PermissionRule | undefined {
  if (facts.subject?.kind === "command") return undefined;
  return allows.find((rule) => {
    if (!namesTool(rule, facts)) return false;
    if (rule.specifier === undefined) return true;
    const subject = facts.subject;
    if (subject === undefined || subject.kind === "command") return false;
    if (subject.kind === "url") return hostMatches(rule.specifier, subject.url);
    return pathRuleMatches(state, rule, facts.paths, true);
  });
}

/** Whether every file a command writes is inside the working directories or allowed by an `Edit`/`Write` rule. */
function shellWritesAllowed(
  state: GateState,
  allows: readonly PermissionRule[],
  shell: ShellFacts,
  dirs: string[],
): boolean {
  for (const write of shell.writes) {
    const paths = write.paths;
    if (paths?.every((path) => isInsideDirectories(path, dirs))) continue;
    const covering = allows.find(
      (rule) =>
        coversShellWrites(rule) &&
        (rule.specifier === undefined || (paths !== undefined && pathRuleMatches(state, rule, paths, true))),
    );
    if (covering === undefined) return false;
  }
  return true;
}
