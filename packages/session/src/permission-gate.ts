import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import type { Tool, ToolPermissionSubject } from "@unforget/core";
import { commandMatches, splitCommand, suggestCommandRule } from "./permission-command.ts";
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
import type { ToolCallDecision, ToolCallRequest } from "./tool-authorization.ts";

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

interface CallFacts {
  tool: Tool;
  subject: ToolPermissionSubject | undefined;
  /** Command subjects: the simple commands; others: empty. */
  commands: string[];
  substitutes: boolean;
  /** Path subjects: as written and as reached through symlinks. */
  paths: string[];
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

export function createPermissionGate(options: PermissionGateOptions): PermissionGate {
  const context: PathContext = { cwd: resolve(options.cwd), homeDir: options.homeDir };
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

  /** Whether `rule` catches the call: for deny and ask any part is enough, for allow every part must match. */
  const matches = (
    rule: PermissionRule,
    facts: CallFacts,
    part: string | undefined,
    path: string | undefined,
  ) => {
    if (!namesTool(rule, facts)) return false;
    if (rule.specifier === undefined) return true;
    const subject = facts.subject;
    if (subject === undefined) return false;
    if (subject.kind === "command") return part !== undefined && commandMatches(rule.specifier, part);
    if (subject.kind === "url") return hostMatches(rule.specifier, subject.url);
    return path !== undefined && pathMatches(rule.specifier, path, rule.source.root, context);
  };
  /** The parts of the call a rule is checked against: each simple command, or each form of the path. */
  const pieces = (facts: CallFacts): [string | undefined, string | undefined][] => {
    if (facts.commands.length > 0) return facts.commands.map((command) => [command, undefined]);
    if (facts.paths.length > 0) return facts.paths.map((path) => [undefined, path]);
    return [[undefined, undefined]];
  };
  const catching = (behavior: PermissionBehavior, facts: CallFacts) =>
    rules.find(
      (rule) =>
        rule.behavior === behavior && pieces(facts).some(([part, path]) => matches(rule, facts, part, path)),
    );
  /** For allow: the rule that covers the first piece, when every piece is covered by some allow rule. */
  const allowing = (facts: CallFacts) => {
    // Text a substitution runs is unseen: only a rule that allows the tool whatever its input covers it.
    const found = pieces(facts).map(([part, path]) =>
      rules.find(
        (rule) =>
          rule.behavior === "allow" &&
          (!facts.substitutes || rule.specifier === undefined) &&
          matches(rule, facts, part, path),
      ),
    );
    return found.every((rule) => rule !== undefined) ? found[0] : undefined;
  };

  /** Whether an allow rule with this text is there already (a suggestion or an update must not add it again). */
  const hasRule = (behavior: PermissionBehavior, text: string) =>
    rules.some((rule) => rule.behavior === behavior && rule.text === text);
  /** What "always" would add: only what is not allowed already (a command an allow rule covers is left out). */
  const suggestionsFor = (facts: CallFacts, outside: string | undefined): PermissionUpdate[] => {
    const all = suggestionsOf(facts, outside);
    return all.flatMap((update): PermissionUpdate[] => {
      if (update.type !== "addRules") return [update];
      const fresh = update.rules.filter((text) => !hasRule(update.behavior, text));
      return fresh.length === 0 ? [] : [{ ...update, rules: fresh }];
    });
  };
  const suggestionsOf = (facts: CallFacts, outside: string | undefined): PermissionUpdate[] => {
    const { subject, tool } = facts;
    if (subject?.kind === "command") {
      const open = facts.commands.filter(
        (part) =>
          !rules.some(
            (rule) =>
              rule.behavior === "allow" &&
              (!facts.substitutes || rule.specifier === undefined) &&
              matches(rule, facts, part, undefined),
          ),
      );
      // Every part allowed already (the question comes from an ask rule or a substitution): no rule would help.
      if (open.length === 0) return [];
      return [{ type: "addRules", behavior: "allow", rules: [...new Set(open.map(suggestCommandRule))] }];
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
      // A rule or folder that is there already is not added again (two answers about the same call, a
      // `/permissions allow` of a rule the settings have): the list stays one line per rule.
      for (const update of updates) {
        if (update.type === "setMode") mode = update.mode;
        else if (update.type === "addDirectories") {
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
      const split = subject?.kind === "command" ? splitCommand(subject.command) : undefined;
      const facts: CallFacts = {
        tool,
        subject,
        commands: split?.parts ?? [],
        substitutes: split?.substitutes ?? false,
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

      const denyRule = catching("deny", facts);
      if (denyRule !== undefined)
        return deny(
          `Permission denied: ${what} is refused by ${describeRule(denyRule)}. Do not try it another way; do something else or ask the user.`,
          { type: "rule", rule: denyRule },
        );
      if (mode === "plan" && tool.readOnly !== true)
        return deny(
          `${tool.name} was not run: plan mode allows read-only tools only. Finish the plan and present it; the user leaves plan mode to carry it out.`,
          { type: "mode", mode },
        );

      const dirs = await allDirectories();
      const outside = facts.paths.find((path) => !isInsideDirectories(path, dirs));
      let why: string;
      let askedBy: PermissionDecisionReason;
      const askRule = catching("ask", facts);
      if (askRule !== undefined) {
        why = `${describeRule(askRule)} asks before ${what}.`;
        askedBy = { type: "rule", rule: askRule };
      } else {
        if (mode === "bypassPermissions") return allow({ type: "mode", mode });
        if (request.hookDecision === "allow") return allow({ type: "hook" });
        const allowRule = allowing(facts);
        if (allowRule !== undefined) return allow({ type: "rule", rule: allowRule });
        if (outside !== undefined) {
          why = `${what} reaches ${outside}, outside the working directories (${directories.join(", ")}).`;
        } else if (tool.readOnly === true && !tool.name.startsWith("mcp__")) {
          // An MCP server's readOnlyHint is the server's claim, not a fact: it lifts plan mode's refusal, and
          // still asks (the MCP spec says clients must not trust annotations from servers they do not trust).
          return allow({ type: "default", detail: "a read-only tool inside the working directories" });
        } else if (mode === "acceptEdits" && subject?.kind === "path" && subject.access === "write") {
          return allow({ type: "mode", mode });
        } else if (facts.substitutes) {
          why = `${what} runs command substitutions no rule can approve.`;
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
  return gate;
}
