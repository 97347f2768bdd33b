import { describe, expect, it } from "vitest";
import { PermissionRuleError, parsePermissionRule } from "./permission-rule.ts";

const source = { name: "project", file: "/p/.claude/settings.json", root: "/p" };

describe("parsePermissionRule", () => {
  it.each([
    ["Bash", "Bash", undefined],
    ["Bash(*)", "Bash", undefined],
    ["Bash()", "Bash", undefined],
    ["Bash(npm test:*)", "Bash", "npm test:*"],
    ["Bash(echo (hi))", "Bash", "echo (hi)"],
    ["Read(./src/**)", "Read", "./src/**"],
    ["Edit(//etc/**)", "Edit", "//etc/**"],
    ["WebFetch(domain:example.com)", "WebFetch", "domain:example.com"],
    ["mcp__github", "mcp__github", undefined],
    ["mcp__github__*", "mcp__github", undefined],
    ["mcp__github__create_issue", "mcp__github__create_issue", undefined],
  ])("%s", (text, toolName, specifier) => {
    expect(parsePermissionRule(text, "allow", source)).toMatchObject({
      text,
      toolName,
      specifier,
      behavior: "allow",
      source,
    });
  });

  it.each([
    ["", "does not start with a tool name"],
    ["(npm test)", "does not start with a tool name"],
    ["Bash(npm test", 'without a closing ")"'],
    ["Bash(npm:*:x)", 'uses ":*" before the end'],
    ["Ba sh", "does not start with a tool name"],
    ["Bash*", 'only MCP rules may, as "mcp__server__*"'],
    ["mcp__github(create)", "MCP rules name the server or the tool only"],
  ])("rejects %j", (text, why) => {
    let caught: unknown;
    try {
      parsePermissionRule(text, "deny", source);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PermissionRuleError);
    expect((caught as PermissionRuleError).code).toBe("permission_rule");
    expect((caught as Error).message).toContain(`The deny rule "${text}" in /p/.claude/settings.json`);
    expect((caught as Error).message).toContain(why);
  });
});
