import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { Tool, ToolPermissionSubject } from "@unforget/core";
import type { ToolCallDecision, ToolCallRequest } from "../tools/tool-authorization.ts";
import {
  type CommandPattern,
  commandMatches,
  readCommandPattern,
  suggestCommandRule,
} from "./permission-command.ts";
import {
  isInsideDirectories,
  type PathContext,
  pathMatches,
  resolvePathForPermission,
  suggestPathPattern,
} from "./permission-path.ts";
import {
  type PermissionBehavior,
  type PermissionRule,
  type PermissionRuleSource,
  parsePermissionRule,
} from "./permission-rule.ts";
import { clip, type ShellAnalyzer, type ShellCommand, shellAnalyzer } from "./shell/shell-analyzer.ts";

/**
 * Claude Code's modes: `default` asks for what no rule allows; `acceptEdits` also allows file writes inside the
 * working directories; `plan` allows read-only tools only; `bypassPermissions` allows all but what deny and ask
 * rules catch; `dontAsk` denies whatever would have been asked (for runs with no one to ask).
 */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk";

export const PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk",
];

/** A change the user may approve along with a call; it lasts for the session. */
export type PermissionUpdate =
  | { type: "addRules"; behavior: PermissionBehavior; rules: string[] }
  | { type: "setMode"; mode: PermissionMode }
  | { type: "addDirectories"; directories: string[] };

/** What the UI answers when asked about a call. */
export type PermissionResponse =
  | {
      behavior: "allow";
      /** Run the call with this input instead (the user edited it). */
      updatedInput?: Record<string, unknown>;
      /** Apply these for the rest of the session ("always allow"), usually some of the suggestions. */
      updatedPermissions?: PermissionUpdate[];
    }
  | {
      behavior: "deny";
      /** What the model reads: why, and what to do instead. */
      message: string;
    };

export interface CanUseToolOptions {
  /** Aborted when the turn is cancelled: stop asking and resolve (any answer is then ignored). */
  signal: AbortSignal;
  /** Updates the UI can offer as "always allow …" (a prefix rule, acceptEdits, a directory). */
  suggestions: PermissionUpdate[];
  /** Why the call needs an answer, in one sentence. */
  reason: string;
  toolUseId: string;
  /** The path that is outside the working directories, when that is why. */
  blockedPath?: string;
}

/** Called when a call needs the user's answer; a rejection is a denial. */
export type CanUseTool = (
  tool: Tool,
  input: Record<string, unknown>,
  options: CanUseToolOptions,
) => Promise<PermissionResponse>;

/** Who or what decided: a rule (and where it came from), the mode, a hook, the user, or the defaults. */
export type PermissionDecisionReason =
  | { type: "rule"; rule: PermissionRule }
  | { type: "mode"; mode: PermissionMode }
  | { type: "hook" }
  | { type: "user" }
  | { type: "default"; detail: string }
  | { type: "no-one-to-ask"; detail: string };

/** The loop's decision, with what decided it. */
export type PermissionDecision = ToolCallDecision & { decidedBy: PermissionDecisionReason };

/** Rule lists in Claude Code's settings syntax. */
export interface PermissionRuleLists {
  allow?: readonly string[];
  deny?: readonly string[];
  ask?: readonly string[];
}

export interface PermissionGateOptions extends PathContext {
  /** Default `default`. */
  mode?: PermissionMode;
  /** Rules from settings files (see `loadPermissionSettings`), each with its source. */
  sources?: readonly (PermissionRuleLists & { source: PermissionRuleSource })[];
  /** Rules given in code; `/path` patterns are relative to `cwd`. An unreadable rule throws `PermissionRuleError`. */
  rules?: PermissionRuleLists;
  /** Folders besides `cwd` that count as working directories (Claude Code's `additionalDirectories`). */
  additionalDirectories?: readonly string[];
  /** Asked when a call needs an answer; without it such calls are denied with a message that says so. */
  canUseTool?: CanUseTool;
}

/** Decides whether each tool call may run, as Claude Code does; plug `authorize` into the session. */
export interface PermissionGate {
  /** The session's `ToolCallAuthorizer`: called once per call after validation and PreToolUse. Never rejects. */
  authorize(request: ToolCallRequest): Promise<PermissionDecision>;
  /** The mode now (a user's answer may have changed it). */
  mode(): PermissionMode;
  /** Called when the user switches mode (e.g. shift+tab in a UI). */
  setMode(mode: PermissionMode): void;
  /** Applies updates for the rest of the session, as an "always" answer does; a bad rule throws. */
  update(updates: readonly PermissionUpdate[]): void;
  /** Every rule in force, deny first, then ask, then allow. */
  rules(): PermissionRule[];
  /** The working directories (absolute), `cwd` first. */
  directories(): string[];
}

/** Tools Claude Code's `Edit` and `Read` rules cover besides those whose permission subject says so. */
const WRITING_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
const READING_TOOLS = new Set(["Read", "Grep", "Glob", "LS", "NotebookRead"]);

/** A file a shell command writes, as written and as reached through symlinks; no paths when only known at run time. */
interface ShellWriteFacts {
  text: string;
  paths: string[] | undefined;
}

/** What a command subject runs and writes, as the shell will (see shell/shell-analyzer.ts). */
interface ShellFacts {
  /** Reads a rule's words the way the command's are read. */
  analyze: ShellAnalyzer;
  commands: ShellCommand[];
  unresolved: string[];
  writes: ShellWriteFacts[];
}

interface CallFacts {
  tool: Tool;
  subject: ToolPermissionSubject | undefined;
  /** Command subjects only. */
  shell: ShellFacts | undefined;
  /** Path subjects: as written and as reached through symlinks. */
  paths: string[];
}

/** A rule that catches a call: for certain, or possibly (`maybe` says why it cannot be told before the call runs). */
interface Caught {
  rule: PermissionRule;
  /** The part of a command it caught, when that is not the whole command. */
  part?: string;
  maybe?: string;
}

function describeSubject(subject: ToolPermissionSubject | undefined): string {
  if (subject === undefined) return "";
  if (subject.kind === "command") return ` \`${subject.command}\``;
  if (subject.kind === "path") return ` (${subject.access} ${subject.path})`;
  return ` (${subject.url})`;
}

function describeRule(rule: PermissionRule): string {
  return `the ${rule.behavior} rule "${rule.text}" (${rule.source.file ?? `${rule.source.name} rules`})`;
}

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

export function createPermissionGate(options: PermissionGateOptions): PermissionGate {
  const context: PathContext = { cwd: resolve(options.cwd), homeDir: options.homeDir };
  const homeDir = options.homeDir ?? homedir();
  const codeSource: PermissionRuleSource = { name: "options", root: context.cwd };
  const sessionSource: PermissionRuleSource = { name: "session", root: context.cwd };
  const rules: PermissionRule[] = [];
  const addLists = (lists: PermissionRuleLists, source: PermissionRuleSource) => {
    for (const behavior of ["deny", "ask", "allow"] as const)
      for (const text of lists[behavior] ?? []) rules.push(parsePermissionRule(text, behavior, source));
  };
  for (const { source, ...lists } of options.sources ?? []) addLists(lists, source);
  if (options.rules !== undefined) addLists(options.rules, codeSource);
  let mode: PermissionMode = options.mode ?? "default";
  const directories = [
    context.cwd,
    ...(options.additionalDirectories ?? []).map((dir) => resolve(context.cwd, dir)),
  ];
  let realDirectories: Promise<string[]> | undefined;
  const allDirectories = () => {
    realDirectories ??= Promise.all(directories.map((dir) => realpath(dir).catch(() => dir))).then((real) => [
      ...new Set([...directories, ...real]),
    ]);
    return realDirectories;
  };

  /** A command rule's specifier, read once; its words are read the way commands are (quotes removed). */
  const patterns = new Map<string, CommandPattern>();
  const patternOf = (specifier: string, analyze: ShellAnalyzer): CommandPattern => {
    let pattern = patterns.get(specifier);
    if (pattern === undefined) {
      const body = (specifier.endsWith(":*") ? specifier.slice(0, -2) : specifier).trim();
      let words: string[] | undefined;
      if (!/(?<!\\)\*/.test(body)) {
        const read = analyze(body, { homeDir });
        const first = read.commands[0];
        if (
          read.unresolved.length === 0 &&
          first?.text === body &&
          first.words.every((word) => word !== undefined)
        )
          words = first.words as string[];
      }
      pattern = readCommandPattern(specifier, words === undefined ? undefined : () => words);
      patterns.set(specifier, pattern);
    }
    return pattern;
  };

  /** Whether a path, in all its forms (deny and ask: any form), matches a rule's pattern. */
  const pathRuleMatches = (rule: PermissionRule, paths: readonly string[], every: boolean) =>
    rule.specifier === undefined ||
    (every ? paths.every.bind(paths) : paths.some.bind(paths))((path) =>
      pathMatches(rule.specifier!, path, rule.source.root, context),
    );

  /** The first rule of `behavior` that catches the call, or that may (when none does for certain). */
  const catching = (behavior: PermissionBehavior, facts: CallFacts): { certain?: Caught; maybe?: Caught } => {
    const found: { certain?: Caught; maybe?: Caught } = {};
    for (const rule of rules) {
      if (rule.behavior !== behavior) continue;
      const caught = catches(rule, facts);
      if (caught === undefined) continue;
      if (caught.maybe === undefined) {
        found.certain = caught;
        return found;
      }
      found.maybe ??= caught;
    }
    return found;
  };

  const catches = (rule: PermissionRule, facts: CallFacts): Caught | undefined => {
    const { subject, shell } = facts;
    if (shell !== undefined) {
      if (coversShellWrites(rule) && rule.toolName !== facts.tool.name) {
        let maybe: Caught | undefined;
        for (const write of shell.writes) {
          if (write.paths === undefined) {
            if (rule.specifier === undefined) return { rule, part: `> ${write.text}` };
            maybe ??= {
              rule,
              part: `> ${write.text}`,
              maybe: `it writes to \`${write.text}\`, a path only known when it runs`,
            };
          } else if (pathRuleMatches(rule, write.paths, false)) return { rule, part: `> ${write.text}` };
        }
        return maybe;
      }
      if (!namesTool(rule, facts)) return undefined;
      if (rule.specifier === undefined) return { rule };
      const pattern = patternOf(rule.specifier, shell.analyze);
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
    if (!namesTool(rule, facts)) return undefined;
    if (rule.specifier === undefined) return { rule };
    if (subject === undefined || subject.kind === "command") return undefined;
    if (subject.kind === "url") return hostMatches(rule.specifier, subject.url) ? { rule } : undefined;
    return pathRuleMatches(rule, facts.paths, false) ? { rule } : undefined;
  };

  /** The first allow rule that covers one simple command (the whole tool, or a pattern matching the command). */
  const coveringRule = (facts: CallFacts, command: ShellCommand, analyze: ShellAnalyzer) =>
    rules.find(
      (rule) =>
        rule.behavior === "allow" &&
        namesTool(rule, facts) &&
        (rule.specifier === undefined ||
          commandMatches(patternOf(rule.specifier, analyze), command, "allow") === "yes"),
    );

  /**
   * The allow rule that covers the call, if it is covered: a path or URL by one rule (every form of a path); a
   * command when every command it runs is allowed (wrappers whose inner command is listed need not be), nothing in
   * it is unresolved (or a bare `Bash` rule allows it whatever it runs), and every file it writes is inside the
   * working directories or allowed by an `Edit`/`Write` rule.
   */
  const allowing = (facts: CallFacts, dirs: string[]): PermissionRule | undefined => {
    const allows = rules.filter((rule) => rule.behavior === "allow");
    const { shell } = facts;
    if (shell === undefined) {
      if (facts.subject?.kind === "command") return undefined;
      return allows.find((rule) => {
        if (!namesTool(rule, facts)) return false;
        if (rule.specifier === undefined) return true;
        const subject = facts.subject;
        if (subject === undefined || subject.kind === "command") return false;
        if (subject.kind === "url") return hostMatches(rule.specifier, subject.url);
        return pathRuleMatches(rule, facts.paths, true);
      });
    }
    const whole = allows.find((rule) => namesTool(rule, facts) && rule.specifier === undefined);
    let first: PermissionRule | undefined;
    for (const command of shell.commands) {
      if (command.transparent) continue;
      const covering = coveringRule(facts, command, shell.analyze);
      if (covering === undefined) return undefined;
      first ??= covering;
    }
    if (shell.unresolved.length > 0 || first === undefined) {
      if (whole === undefined) return undefined;
      first = whole;
    }
    for (const write of shell.writes) {
      const paths = write.paths;
      if (paths?.every((path) => isInsideDirectories(path, dirs))) continue;
      const covering = allows.find(
        (rule) =>
          coversShellWrites(rule) &&
          (rule.specifier === undefined || (paths !== undefined && pathRuleMatches(rule, paths, true))),
      );
      if (covering === undefined) return undefined;
    }
    return first;
  };

  /** Whether a rule with this text is there already (a suggestion or an update must not add it again). */
  const hasRule = (behavior: PermissionBehavior, text: string) =>
    rules.some((rule) => rule.behavior === behavior && rule.text === text);
  /** Whether an allow rule covers this one simple command already. */
  const allowedAlready = (facts: CallFacts, command: ShellCommand, analyze: ShellAnalyzer) =>
    coveringRule(facts, command, analyze) !== undefined;
  /** What "always" would add: only what is not allowed already (a command an allow rule covers is left out). */
  const suggestionsFor = (facts: CallFacts, outside: string | undefined): PermissionUpdate[] =>
    suggestionsOf(facts, outside).flatMap((update): PermissionUpdate[] => {
      if (update.type !== "addRules") return [update];
      const fresh = update.rules.filter((text) => !hasRule(update.behavior, text));
      return fresh.length === 0 ? [] : [{ ...update, rules: fresh }];
    });
  const suggestionsOf = (facts: CallFacts, outside: string | undefined): PermissionUpdate[] => {
    const { subject, tool, shell } = facts;
    if (shell !== undefined) {
      const updates: PermissionUpdate[] = [];
      const suggested = shell.commands.flatMap((command) => {
        if (command.transparent || allowedAlready(facts, command, shell.analyze)) return [];
        const rule = suggestCommandRule(command.words);
        return rule === undefined ? [] : [rule];
      });
      if (suggested.length > 0)
        updates.push({ type: "addRules", behavior: "allow", rules: [...new Set(suggested)] });
      if (outside !== undefined)
        updates.push({ type: "addDirectories", directories: [resolve(outside, "..")] });
      return updates;
    }
    if (subject?.kind === "path") {
      if (outside !== undefined) return [{ type: "addDirectories", directories: [resolve(outside, "..")] }];
      if (subject.access === "write")
        return [
          { type: "setMode", mode: "acceptEdits" },
          {
            type: "addRules",
            behavior: "allow",
            rules: [`Edit(${suggestPathPattern(facts.paths[0]!, context)})`],
          },
        ];
    }
    return [{ type: "addRules", behavior: "allow", rules: [tool.name] }];
  };

  /** Reads a command subject: what it runs (every simple command) and the files it writes. */
  const shellFacts = async (command: string, cwd: string): Promise<ShellFacts> => {
    const analyze = await shellAnalyzer();
    const analysis = analyze(command, { homeDir });
    const writes = await Promise.all(
      analysis.writes.map(async (write) => ({
        text: write.text,
        paths: write.path === undefined ? undefined : await resolvePathForPermission(write.path, cwd),
      })),
    );
    return { analyze, commands: analysis.commands, unresolved: analysis.unresolved, writes };
  };

  const gate: PermissionGate = {
    mode: () => mode,
    setMode(next) {
      mode = next;
    },
    update(updates) {
      // Every rule is read before any update applies, so a bad one changes nothing.
      for (const update of updates)
        if (update.type === "addRules")
          for (const text of update.rules) parsePermissionRule(text, update.behavior, sessionSource);
      for (const update of updates) {
        if (update.type === "setMode") mode = update.mode;
        else if (update.type === "addDirectories") {
          // A folder or rule that is there already is not added again (two answers about the same call, a
          // `/permissions allow` of a rule the settings have): the list stays one line per rule.
          const fresh = update.directories
            .map((dir) => resolve(context.cwd, dir))
            .filter((dir) => !directories.includes(dir));
          directories.push(...new Set(fresh));
          realDirectories = undefined;
        } else {
          const fresh = [...new Set(update.rules)].filter((text) => !hasRule(update.behavior, text));
          addLists({ [update.behavior]: fresh }, sessionSource);
        }
      }
    },
    rules: () =>
      (["deny", "ask", "allow"] as const).flatMap((behavior) =>
        rules.filter((rule) => rule.behavior === behavior),
      ),
    directories: () => [...directories],

    async authorize(request) {
      const { tool, input } = request;
      let subject: ToolPermissionSubject | undefined;
      try {
        subject = tool.permissionSubject?.(input, { cwd: request.cwd });
      } catch (error) {
        return {
          behavior: "deny",
          message: `${tool.name} was not run: what it would touch could not be read from its input (${(error as Error).message}). Check the input and try again.`,
          decidedBy: { type: "default", detail: "the permission subject could not be read" },
        };
      }
      const facts: CallFacts = {
        tool,
        subject,
        shell: subject?.kind === "command" ? await shellFacts(subject.command, request.cwd) : undefined,
        paths: subject?.kind === "path" ? await resolvePathForPermission(subject.path, request.cwd) : [],
      };
      const what = `${tool.name}${describeSubject(subject)}`;
      const deny = (message: string, decidedBy: PermissionDecisionReason): PermissionDecision => ({
        behavior: "deny",
        message,
        reason: decidedBy.type === "rule" ? describeRule(decidedBy.rule) : decidedBy.type,
        decidedBy,
      });
      const allow = (
        decidedBy: PermissionDecisionReason,
        input?: Record<string, unknown>,
      ): PermissionDecision => ({
        behavior: "allow",
        ...(input === undefined ? {} : { input }),
        reason: decidedBy.type === "rule" ? describeRule(decidedBy.rule) : decidedBy.type,
        decidedBy,
      });
      const commandText = subject?.kind === "command" ? subject.command : undefined;
      const inPart = (caught: Caught) =>
        caught.part === undefined || caught.part === commandText ? "" : ` (at \`${clip(caught.part)}\`)`;

      const denied = catching("deny", facts);
      if (denied.certain !== undefined)
        return deny(
          `Permission denied: ${what} is refused by ${describeRule(denied.certain.rule)}${inPart(denied.certain)}. Do not try it another way; do something else or ask the user.`,
          { type: "rule", rule: denied.certain.rule },
        );
      if (mode === "plan" && tool.readOnly !== true)
        return deny(
          `${tool.name} was not run: plan mode allows read-only tools only. Finish the plan and present it; the user leaves plan mode to carry it out.`,
          { type: "mode", mode },
        );

      const dirs = await allDirectories();
      const written = facts.shell?.writes.flatMap((write) => write.paths ?? []) ?? [];
      const outside = [...facts.paths, ...written].find((path) => !isInsideDirectories(path, dirs));
      let why: string;
      let askedBy: PermissionDecisionReason;
      const asked = catching("ask", facts);
      const askRule = asked.certain ?? asked.maybe;
      if (askRule !== undefined) {
        why = `${describeRule(askRule.rule)} asks before ${what}${inPart(askRule)}.`;
        askedBy = { type: "rule", rule: askRule.rule };
      } else if (denied.maybe !== undefined) {
        // A deny rule that may match is never skipped, in any mode: the user decides.
        why = `${what} may run what ${describeRule(denied.maybe.rule)} refuses, and the gate cannot tell before it runs: ${denied.maybe.maybe}.`;
        askedBy = { type: "rule", rule: denied.maybe.rule };
      } else {
        if (mode === "bypassPermissions") return allow({ type: "mode", mode });
        if (request.hookDecision === "allow") return allow({ type: "hook" });
        const allowRule = allowing(facts, dirs);
        if (allowRule !== undefined) return allow({ type: "rule", rule: allowRule });
        const shell = facts.shell;
        const unknownWrite = shell?.writes.find((write) => write.paths === undefined);
        if (shell !== undefined && shell.unresolved.length > 0) {
          why = `${what} cannot be checked before it runs: ${shell.unresolved[0]}. No rule can approve what it cannot see; spell the command out.`;
        } else if (outside !== undefined) {
          why = `${what} ${facts.shell === undefined ? "reaches" : "writes"} ${outside}, outside the working directories (${directories.join(", ")}).`;
        } else if (unknownWrite !== undefined) {
          why = `${what} writes to \`${unknownWrite.text}\`, a path only known when it runs.`;
        } else if (shell !== undefined) {
          const part = firstUnallowed(facts);
          why =
            part === undefined || part === commandText
              ? `no rule allows ${what}.`
              : `no rule allows \`${clip(part)}\`, which ${what} runs.`;
        } else if (tool.readOnly === true && !tool.name.startsWith("mcp__")) {
          // An MCP server's readOnlyHint is the server's claim, not a fact: it lifts plan mode's refusal, and
          // still asks (the MCP spec says clients must not trust annotations from servers they do not trust).
          return allow({ type: "default", detail: "a read-only tool inside the working directories" });
        } else if (mode === "acceptEdits" && subject?.kind === "path" && subject.access === "write") {
          return allow({ type: "mode", mode });
        } else {
          why = `no rule allows ${what}.`;
        }
        askedBy = { type: "default", detail: why };
      }

      if (mode === "dontAsk" || options.canUseTool === undefined) {
        const detail = mode === "dontAsk" ? "dontAsk mode denies what it would ask" : "no canUseTool to ask";
        return deny(
          `Permission denied: ${why} There is no one to ask${mode === "dontAsk" ? " (dontAsk mode)" : ""}; the user can add an allow rule or change the mode. Do something else.`,
          askedBy.type === "rule" ? askedBy : { type: "no-one-to-ask", detail },
        );
      }
      let response: PermissionResponse;
      try {
        response = await options.canUseTool(tool, input, {
          signal: request.signal,
          suggestions: suggestionsFor(facts, outside),
          reason: why.charAt(0).toUpperCase() + why.slice(1),
          toolUseId: request.toolUseId,
          ...(outside === undefined ? {} : { blockedPath: outside }),
        });
      } catch (error) {
        return deny(
          `Permission denied: asking the user about ${what} failed (${(error as Error).message}).`,
          { type: "user" },
        );
      }
      if (request.signal.aborted)
        return deny(`${what} was not run: the turn was interrupted.`, { type: "user" });
      if (response.behavior === "deny")
        return deny(response.message || `The user denied ${what}.`, { type: "user" });
      try {
        gate.update(response.updatedPermissions ?? []);
      } catch {
        // A rule the UI built badly does not undo the user's answer for this call.
      }
      return allow({ type: "user" }, response.updatedInput);
    },
  };

  /** The text of the first command no allow rule covers, for the reason a call is asked about. */
  const firstUnallowed = (facts: CallFacts): string | undefined => {
    const shell = facts.shell;
    if (shell === undefined) return undefined;
    return shell.commands.find(
      (command) => !command.transparent && !allowedAlready(facts, command, shell.analyze),
    )?.text;
  };
  return gate;
}
