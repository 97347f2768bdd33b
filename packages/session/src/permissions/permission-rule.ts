import { UnforgetError } from "@unforget/core";

/** What a rule does when it matches. Deny beats ask beats allow. */
export type PermissionBehavior = "allow" | "deny" | "ask";

/** Where a rule came from: a settings file, the session (an "always allow" answer), or code. */
export interface PermissionRuleSource {
  /** "user", "project", "local", "session", "options", … shown in decisions. */
  readonly name: string;
  /** The settings file, when the rule came from one. */
  readonly file?: string;
  /** The folder `/path` patterns are relative to (the project root for a project's settings). */
  readonly root: string;
}

/** One rule in Claude Code's settings syntax, parsed: `Tool` or `Tool(specifier)`. */
export interface PermissionRule {
  readonly behavior: PermissionBehavior;
  /** The rule as written, e.g. `Bash(npm test:*)`. */
  readonly text: string;
  /** `Bash`, `Edit`, `mcp__github`, `mcp__github__create_issue`, … */
  readonly toolName: string;
  /** What is inside the parentheses; undefined for a bare tool name (or `Tool(*)`), which matches every call. */
  readonly specifier: string | undefined;
  readonly source: PermissionRuleSource;
}

/** A rule that cannot be read; the message says what is wrong and how to write it. */
export class PermissionRuleError extends UnforgetError {
  readonly rule: string;
  /** The settings file the rule is in, when it came from one. */
  readonly file: string | undefined;

  constructor(message: string, details: { rule: string; file?: string }) {
    super("permission_rule", message, {});
    this.rule = details.rule;
    this.file = details.file;
  }
}

const TOOL_NAME = /^[A-Za-z0-9_-]+(?:\*)?$/;

/**
 * Reads one rule. `Tool(*)` and `Tool()` are the bare tool; `:*` (Claude Code's prefix form) may only end a
 * specifier. Throws `PermissionRuleError` naming the rule (and file) when it cannot be read.
 */
export function parsePermissionRule(
  text: string,
  behavior: PermissionBehavior,
  source: PermissionRuleSource,
): PermissionRule {
  const fail = (why: string): never => {
    throw new PermissionRuleError(
      `The ${behavior} rule "${text}"${source.file === undefined ? "" : ` in ${source.file}`} ${why}`,
      { rule: text, file: source.file },
    );
  };
  const trimmed = text.trim();
  const open = trimmed.indexOf("(");
  const toolName = open === -1 ? trimmed : trimmed.slice(0, open);
  if (!TOOL_NAME.test(toolName))
    fail(
      'does not start with a tool name: write "Tool" or "Tool(specifier)", e.g. "Bash(npm test:*)" or "Read(./src/**)".',
    );
  if (toolName.endsWith("*") && !/^mcp__[^_]/.test(toolName))
    fail('uses "*" in a tool name; only MCP rules may, as "mcp__server__*".');
  if (open === -1)
    return { behavior, text, toolName: toolName.replace(/__\*$/, ""), specifier: undefined, source };
  if (!trimmed.endsWith(")")) fail('has an opening "(" without a closing ")" at the end.');
  const specifier = trimmed.slice(open + 1, -1).trim();
  if (toolName === "Bash" && specifier.includes(":*") && !specifier.endsWith(":*"))
    fail(
      'uses ":*" before the end; the prefix form is "Bash(npm run test:*)", or use "*" anywhere: "Bash(git * main)".',
    );
  if (toolName.startsWith("mcp__"))
    fail("gives an MCP tool a specifier; MCP rules name the server or the tool only.");
  return {
    behavior,
    text,
    toolName,
    specifier: specifier === "" || specifier === "*" ? undefined : specifier,
    source,
  };
}
